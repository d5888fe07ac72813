import { describe, expect, it } from 'vitest';
import { buildEventEntry } from '../../../../lib/aws/publish/event-entry.js';
import {
  orderKeyOf,
  partitionKeyOf,
  StreamLimits,
  streamEventOf,
  streamEventOfRecord,
  streamRecordData,
  streamRecordSize,
  UNKEYED,
} from '../../../../lib/aws/publish/stream-record.js';

const pullRequest = {
  action: 'synchronize',
  number: 42,
  pull_request: { number: 42 },
  repository: { full_name: 'octo/hello' },
};

describe('orderKeyOf', () => {
  it("keys a GitHub pull request's deliveries by the pull request, and by the repository when asked", () => {
    const delivery = {
      name: 'pull_request',
      nativeEvent: 'pull_request',
      forge: 'github',
      payload: pullRequest,
    };
    expect(orderKeyOf(delivery)).toBe('octo/hello#pr:42');
    expect(orderKeyOf(delivery, 'repository')).toBe('octo/hello');
  });

  it("keys a GitLab merge request by its project and iid, read under the forge's own event name", () => {
    const payload = {
      object_kind: 'merge_request',
      project: { path_with_namespace: 'group/project' },
      object_attributes: { iid: 7, action: 'open' },
    };
    expect(
      orderKeyOf({ name: 'pull_request', nativeEvent: 'Merge Request Hook', forge: 'gitlab', payload }),
    ).toBe('group/project!mr:7');
  });

  it('reads the key at a path for a sender without a resource rule', () => {
    const delivery = {
      name: 'invoice.paid',
      forge: 'standard',
      payload: { data: { customer: { id: 'c_1' } } },
    };
    expect(orderKeyOf(delivery, { path: '$.data.customer.id' })).toBe('c_1');
    expect(orderKeyOf(delivery)).toBe(UNKEYED);
  });

  it('groups what names no key under one fallback key instead of refusing it', () => {
    expect(orderKeyOf({ name: 'ping', forge: 'github', payload: {} })).toBe(UNKEYED);
    expect(orderKeyOf({ name: 'push', payload: { ref: 'refs/heads/main' } })).toBe(UNKEYED);
    expect(orderKeyOf({ name: 'push', forge: 'svn', payload: {} })).toBe(UNKEYED);
    expect(orderKeyOf({ name: 'x', forge: 'standard', payload: null }, { path: '$.id' })).toBe(UNKEYED);
  });
});

describe('partitionKeyOf', () => {
  it("puts the source in front, so two sources' resources of one name never share a key", () => {
    expect(partitionKeyOf('github', 'octo/hello#pr:42')).toBe('github|octo/hello#pr:42');
    expect(partitionKeyOf('github-acme', 'octo/hello#pr:42')).not.toBe(
      partitionKeyOf('github', 'octo/hello#pr:42'),
    );
    expect(partitionKeyOf(undefined, 'octo/hello')).toBe('|octo/hello');
  });

  it("hashes a key over Kinesis's 256 characters: the same key the same hash, two keys two hashes", () => {
    const long = `org/${'r'.repeat(300)}#pr:1`;
    const key = partitionKeyOf('github', long);
    expect(key).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect([...key].length).toBeLessThanOrEqual(StreamLimits.partitionKeyChars);
    expect(partitionKeyOf('github', long)).toBe(key);
    expect(partitionKeyOf('github', `${long}0`)).not.toBe(key);
  });

  it('counts characters, not bytes: 256 non-ASCII characters stay as they are', () => {
    const key = `s|${'é'.repeat(254)}`;
    expect([...key]).toHaveLength(256);
    expect(partitionKeyOf('s', 'é'.repeat(254))).toBe(key);
    expect(partitionKeyOf('s', 'é'.repeat(255))).toMatch(/^sha256:/);
  });
});

describe('stream events and records', () => {
  const entry = buildEventEntry(
    {
      id: 'd-1',
      name: 'pull_request',
      payload: pullRequest,
      forge: 'github',
      action: 'synchronize',
      source: 'github',
    },
    { source: 'forge.webhooks' },
  );

  it('hold the EventBridge event the rules get: the same detail-type, source and detail', () => {
    const event = streamEventOf(entry, new Date('2026-12-01T10:00:00.000Z'));
    expect(event).toEqual({
      version: '0',
      id: 'd-1',
      'detail-type': 'pull_request.synchronize',
      source: 'forge.webhooks',
      time: '2026-12-01T10:00:00.000Z',
      detail: JSON.parse(entry.Detail),
    });
    const data = streamRecordData(event);
    expect(streamRecordSize(data, 'github|octo/hello#pr:42')).toBe(data.byteLength + 23);
  });

  it('read back from a batch record: the event as written', () => {
    const event = streamEventOf(entry, new Date(0));
    const record = {
      kinesis: {
        data: Buffer.from(streamRecordData(event)).toString('base64'),
        partitionKey: 'github|octo/hello#pr:42',
        sequenceNumber: '4959',
      },
    };
    expect(streamEventOfRecord(record)).toEqual(event);
  });

  it('refuse a record another producer wrote, naming its sequence number and not its data', () => {
    const record = (text: string) => ({
      kinesis: { data: Buffer.from(text).toString('base64'), partitionKey: 'k', sequenceNumber: '77' },
    });
    expect(() => streamEventOfRecord(record('not json {secret}'))).toThrow('stream record 77 is not JSON');
    expect(() => streamEventOfRecord(record('{"detail":{}}'))).toThrow(
      'stream record 77 holds no delivery event (detail-type and detail)',
    );
    expect(() => streamEventOfRecord(record('{"detail-type":"push","detail":null}'))).toThrow(/record 77/);
  });
});
