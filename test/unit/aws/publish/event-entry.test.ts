import { describe, expect, it } from 'vitest';
import {
  actionOf,
  buildEventEntry,
  detailTypeOf,
  eventEntrySize,
  refusedForSize,
  routingFieldsOf,
} from '../../../../lib/aws/publish/event-entry.js';

const issuesOpened = {
  action: 'opened',
  issue: { number: 1, title: 'ü bug' },
  repository: { id: 42, name: 'r', full_name: 'o/r', private: true, owner: { login: 'o', id: 7 } },
  organization: { login: 'o', id: 7 },
  sender: { login: 'alice', id: 9 },
  installation: { id: 1234, node_id: 'x' },
};

describe('detailTypeOf()', () => {
  it('is event.action when the payload has a string action', () => {
    expect(detailTypeOf('issues', { action: 'opened' })).toBe('issues.opened');
  });

  it('is the event name for an event without actions', () => {
    expect(detailTypeOf('push', { ref: 'refs/heads/main' })).toBe('push');
  });

  it('ignores a non-string or empty action', () => {
    expect(detailTypeOf('x', { action: 3 })).toBe('x');
    expect(detailTypeOf('x', { action: '' })).toBe('x');
    expect(detailTypeOf('x', null)).toBe('x');
    expect(detailTypeOf('x', ['opened'])).toBe('x');
  });

  it('keeps dots of a free-form repository_dispatch action', () => {
    expect(detailTypeOf('repository_dispatch', { action: 'deploy.prod' })).toBe(
      'repository_dispatch.deploy.prod',
    );
  });
});

describe('actionOf()', () => {
  it('returns the action or undefined', () => {
    expect(actionOf({ action: 'closed' })).toBe('closed');
    expect(actionOf({})).toBeUndefined();
  });
});

describe('routingFieldsOf()', () => {
  it('keeps only the routing fields, at their usual paths', () => {
    expect(routingFieldsOf(issuesOpened)).toEqual({
      action: 'opened',
      repository: { id: 42, name: 'r', full_name: 'o/r', owner: { login: 'o' } },
      organization: { login: 'o' },
      sender: { login: 'alice' },
      installation: { id: 1234 },
    });
  });

  it('skips missing and non-scalar values', () => {
    expect(routingFieldsOf({ repository: { name: { nested: true } }, sender: null })).toEqual({});
    expect(routingFieldsOf('text')).toEqual({});
  });
});

describe('buildEventEntry()', () => {
  it('builds one entry with detail { delivery, event, action, payload }', () => {
    const entry = buildEventEntry(
      { id: 'd-1', name: 'issues', payload: issuesOpened },
      { source: 'forge.webhooks', eventBusName: 'forge' },
    );
    expect(entry).toEqual({
      Source: 'forge.webhooks',
      DetailType: 'issues.opened',
      EventBusName: 'forge',
      Detail: JSON.stringify({ delivery: 'd-1', event: 'issues', action: 'opened', payload: issuesOpened }),
    });
  });

  it('leaves out action for an event without one, and the bus when none is given', () => {
    const entry = buildEventEntry({ id: 'd-2', name: 'push', payload: { ref: 'main' } }, { source: 's' });
    expect(entry.EventBusName).toBeUndefined();
    expect(JSON.parse(entry.Detail)).toEqual({ delivery: 'd-2', event: 'push', payload: { ref: 'main' } });
  });

  it('with a payloadRef carries the routing fields and the reference instead of the payload', () => {
    const payloadRef = { bucket: 'b', key: 'k', bytes: 10, sha256: 'ab' };
    const entry = buildEventEntry(
      { id: 'd-3', name: 'issues', payload: issuesOpened },
      { source: 's', payloadRef },
    );
    expect(JSON.parse(entry.Detail)).toEqual({
      delivery: 'd-3',
      event: 'issues',
      action: 'opened',
      payload: routingFieldsOf(issuesOpened),
      payloadRef,
    });
    expect(entry.DetailType).toBe('issues.opened');
  });
});

describe('eventEntrySize()', () => {
  it('counts UTF-8 bytes of Source, DetailType, Detail and Resources plus 14', () => {
    expect(eventEntrySize({ Source: 'a', DetailType: 'b', Detail: '{}' })).toBe(1 + 1 + 2 + 14);
    expect(eventEntrySize({ Source: 'ü', DetailType: '€', Detail: '"😀"', Resources: ['arn:x', 'é'] })).toBe(
      2 + 3 + 6 + 5 + 2 + 14,
    );
  });

  it('does not count the bus name', () => {
    const base = { Source: 'a', DetailType: 'b', Detail: '{}' };
    expect(eventEntrySize({ ...base, EventBusName: 'a-very-long-bus-name' })).toBe(eventEntrySize(base));
  });

  it('matches the byte length of the serialized detail for a real payload', () => {
    const entry = buildEventEntry(
      { id: 'd', name: 'issues', payload: issuesOpened },
      { source: 'forge.webhooks' },
    );
    expect(eventEntrySize(entry)).toBe(
      Buffer.byteLength(entry.Detail) + 'forge.webhooks'.length + 'issues.opened'.length + 14,
    );
  });
});

describe('refusedForSize()', () => {
  it("is true for EventBridge's answer to an entry over its limit, and for a 413 before it", () => {
    const total = 'Total size of the entries in the request is over the limit.';
    expect(refusedForSize({ code: 'ValidationException', message: total, status: 400 })).toBe(true);
    expect(refusedForSize({ code: 'ValidationException', message: `${total.slice(0, -1)} (256 KB).` })).toBe(
      true,
    );
    // A front end's 413: the SDK names an empty body `Unknown`, and cannot parse an HTML one.
    expect(refusedForSize({ code: 'Unknown', message: 'UnknownError', status: 413 })).toBe(true);
    expect(refusedForSize({ code: 'SyntaxError', message: "Unexpected token '<'", status: 413 })).toBe(true);
  });

  it('is true for a failed entry whose code or message says it is too large', () => {
    expect(refusedForSize({ code: 'EntryTooLarge' })).toBe(true);
    expect(
      refusedForSize({ code: 'InvalidArgument', message: 'Event size exceeds the limit of 262144' }),
    ).toBe(true);
    expect(refusedForSize({ code: 'InvalidArgument', message: 'request entity too large' })).toBe(true);
  });

  it('is false for any other ValidationException or entry error', () => {
    const other = [
      "1 validation error detected: Value at 'entries' failed to satisfy constraint: Member must have length less than or equal to 10",
      "1 validation error detected: Value 'x' at 'entries.1.member.detailType' failed to satisfy constraint: Member must have length less than or equal to 128",
      'Parameter EventBusName is not valid. Reason: Event bus name must not be empty.',
    ];
    for (const message of other) {
      expect(refusedForSize({ code: 'ValidationException', message, status: 400 }), message).toBe(false);
    }
    expect(refusedForSize({ code: 'MalformedDetail', message: 'Detail is malformed.' })).toBe(false);
    expect(refusedForSize({ code: 'ThrottlingException', message: 'Rate exceeded', status: 400 })).toBe(
      false,
    );
    expect(refusedForSize({ code: 'InternalFailure' })).toBe(false);
    expect(refusedForSize({})).toBe(false);
  });

  it('never reads the size words from a value the message echoes (the payload chooses it)', () => {
    const echoed =
      "1 validation error detected: Value 'issues.size over the limit' at 'entries.1.member.detailType' failed to satisfy constraint: Member must have length less than or equal to 128";
    expect(refusedForSize({ code: 'ValidationException', message: echoed, status: 400 })).toBe(false);
    expect(refusedForSize({ code: 'InvalidArgument', message: 'Value "far too large" is not valid' })).toBe(
      false,
    );
  });
});
