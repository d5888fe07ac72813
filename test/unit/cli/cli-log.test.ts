// The delivery-log commands' pieces: the AWS replay paths (re-publish from a claim check, archive replay with
// its progress) against aws-sdk-client-mock, the stage's table from CloudFormation, SDK failures as one line,
// --since, the local state file, replay headers and the proxy keys of each forge.
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import {
  DescribeReplayCommand,
  EventBridgeClient,
  PutEventsCommand,
  StartReplayCommand,
} from '@aws-sdk/client-eventbridge';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import type { DeliveryDetails, DeliveryRecord } from '../../../lib/aws/delivery-log/index.js';
import { buildEventEntry } from '../../../lib/aws/publish/event-entry.js';
import { archiveReplay, busArnOf, replayName, republish } from '../../../lib/cli/aws-replay.js';
import { proxyKeys } from '../../../lib/cli/commands/dev.js';
import { ofHook, replayHeaders } from '../../../lib/cli/commands/replay.js';
import { awsFailure, parseSince, resolveLogTarget, stackOutput } from '../../../lib/cli/delivery-log.js';
import { CliError } from '../../../lib/cli/errors.js';
import { readStackState } from '../../../lib/cli/state-file.js';
import { deliveryHeaders, readDelivery } from '../../../lib/webhooks/index.js';

const eventBridge = mockClient(EventBridgeClient);
const s3 = mockClient(S3Client);
const cloudFormation = mockClient(CloudFormationClient);

beforeEach(() => {
  eventBridge.reset();
  s3.reset();
  cloudFormation.reset();
});

const body = Buffer.from(
  JSON.stringify({
    action: 'opened',
    repository: { id: 1, name: 'r', full_name: 'o/r', owner: { login: 'o' } },
    big: 'x'.repeat(1000),
  }),
);
const ref = {
  bucket: 'forgebridge-prod-claim-checks',
  key: 'deliveries/2026/11/23/d-1.json',
  bytes: body.byteLength,
  sha256: createHash('sha256').update(body).digest('hex'),
};
const record: DeliveryRecord = {
  recordId: 'r1',
  deliveryId: 'd-1',
  receivedAt: Date.parse('2026-11-23T08:00:00Z'),
  event: 'pull_request',
  action: 'opened',
  forge: 'gitlab',
  source: 'gitlab',
  nativeEvent: 'Merge Request Hook',
  nativeAction: 'open',
  bodyBytes: body.byteLength,
  verdict: 'verified',
  httpStatus: 202,
  outcome: 'published',
  payloadRef: ref,
  expiresAt: 0,
};
function without(value: DeliveryRecord, key: keyof DeliveryRecord): DeliveryRecord {
  const copy = { ...value };
  delete copy[key];
  return copy;
}
const s3Body = (bytes: Buffer) => ({ transformToByteArray: async () => new Uint8Array(bytes) }) as never;

describe('republish (a claim-checked delivery on AWS)', () => {
  it('puts the entry the ingest builds from the S3 object on the bus', async () => {
    s3.on(GetObjectCommand, { Bucket: ref.bucket, Key: ref.key }).resolves({ Body: s3Body(body) });
    eventBridge.on(PutEventsCommand).resolves({ FailedEntryCount: 0, Entries: [{ EventId: 'event-9' }] });
    const done = await republish({
      record,
      deliveryId: 'd-1',
      s3: new S3Client({}),
      eventBridge: new EventBridgeClient({}),
      eventSource: 'forge.webhooks',
      eventBusName: 'forgebridge-prod',
    });
    expect(done.eventId).toBe('event-9');
    const expected = buildEventEntry(
      {
        id: 'd-1',
        name: 'pull_request',
        payload: JSON.parse(body.toString()),
        action: 'opened',
        forge: 'gitlab',
        source: 'gitlab',
        nativeEvent: 'Merge Request Hook',
        nativeAction: 'open',
      },
      { source: 'forge.webhooks', eventBusName: 'forgebridge-prod', payloadRef: ref },
    );
    const sent = eventBridge.commandCalls(PutEventsCommand)[0]?.args[0].input;
    expect(sent?.Entries).toEqual([expected]);
    const detail = JSON.parse(expected.Detail) as Record<string, unknown>;
    expect(detail).toMatchObject({
      delivery: 'd-1',
      event: 'pull_request',
      action: 'opened',
      payloadRef: ref,
    });
    expect(detail.payload).toEqual({
      action: 'opened',
      repository: { id: 1, name: 'r', full_name: 'o/r', owner: { login: 'o' } },
    });
    expect(expected.DetailType).toBe('pull_request.opened');
  });

  it('refuses an object that does not match the reference, and a refused entry', async () => {
    const options = {
      record,
      deliveryId: 'd-1',
      s3: new S3Client({}),
      eventBridge: new EventBridgeClient({}),
      eventSource: 'forge.webhooks',
      eventBusName: 'b',
    };
    s3.on(GetObjectCommand).resolves({ Body: s3Body(Buffer.from('{"other":true}')) });
    await expect(republish(options)).rejects.toThrow(
      'claim-check object "deliveries/2026/11/23/d-1.json" does not match the log record (bytes or sha256)',
    );
    expect(eventBridge.commandCalls(PutEventsCommand)).toHaveLength(0);

    s3.on(GetObjectCommand).resolves({ Body: s3Body(body) });
    eventBridge
      .on(PutEventsCommand)
      .resolves({ FailedEntryCount: 1, Entries: [{ ErrorCode: 'AccessDeniedException' }] });
    const refused = await republish(options).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(CliError);
    expect(refused).toMatchObject({
      message: 'the bus refused the entry: AccessDeniedException',
      exitCode: 1,
    });
  });

  it("carries the record's hook as detail.hook: two hooks' deliveries of one id stay apart on the bus", async () => {
    s3.on(GetObjectCommand).resolves({ Body: s3Body(body) });
    eventBridge.on(PutEventsCommand).resolves({ FailedEntryCount: 0, Entries: [{ EventId: 'event-10' }] });
    const options = {
      deliveryId: 'd-1',
      s3: new S3Client({}),
      eventBridge: new EventBridgeClient({}),
      eventSource: 'forge.webhooks',
      eventBusName: 'b',
    };
    const withHook = await republish({ ...options, record: { ...record, forge: 'github', hook: '2202' } });
    expect(JSON.parse(withHook.entry.Detail)).toMatchObject({
      delivery: 'd-1',
      forge: 'github',
      hook: '2202',
    });
    const sent = eventBridge.commandCalls(PutEventsCommand)[0]?.args[0].input.Entries?.[0];
    expect(JSON.parse(sent?.Detail ?? '{}').hook).toBe('2202');
    const none = await republish({ ...options, record });
    expect(JSON.parse(none.entry.Detail)).not.toHaveProperty('hook');
  });

  it('needs a claim check and an event name', async () => {
    const options = {
      deliveryId: 'd-1',
      s3: new S3Client({}),
      eventBridge: new EventBridgeClient({}),
      eventSource: 's',
      eventBusName: 'b',
    };
    await expect(republish({ ...options, record: without(record, 'payloadRef') })).rejects.toThrow(
      'the delivery has no claim check to re-publish from',
    );
    await expect(republish({ ...options, record: without(record, 'event') })).rejects.toThrow(
      'the delivery log record names no event to publish',
    );
  });
});

describe('archiveReplay (a delivery without a claim check on AWS)', () => {
  const archiveArn = 'arn:aws:events:eu-west-1:123456789012:archive/forgebridge-prod';
  const busArn = 'arn:aws:events:eu-west-1:123456789012:event-bus/forgebridge-prod';
  const receivedAt = Date.parse('2026-11-23T08:00:00Z');

  it('replays the window into the bus and the given rules, and follows it to COMPLETED with its progress', async () => {
    eventBridge.on(StartReplayCommand).resolves({ ReplayArn: 'arn:replay', State: 'STARTING' });
    eventBridge
      .on(DescribeReplayCommand)
      .resolvesOnce({ State: 'RUNNING' })
      .resolvesOnce({ State: 'RUNNING', EventLastReplayedTime: new Date(receivedAt + 2 * 60_000) })
      .resolvesOnce({ State: 'COMPLETED', EventLastReplayedTime: new Date(receivedAt + 5 * 60_000) });
    const progress: [string | undefined, number | undefined][] = [];
    const sleeps: number[] = [];
    const result = await archiveReplay({
      eventBridge: new EventBridgeClient({}),
      archiveArn,
      busArn,
      ruleArns: ['arn:aws:events:eu-west-1:123456789012:rule/forgebridge-prod/on-issues'],
      receivedAt,
      beforeMs: 60_000,
      afterMs: 5 * 60_000,
      name: 'forgebridge-d-1-x',
      wait: true,
      pollMs: 1234,
      onProgress: (replay, fraction) => progress.push([replay.State, fraction]),
      now: () => receivedAt + 60 * 60_000,
      sleep: async (ms) => {
        sleeps.push(ms);
      },
    });
    const start = eventBridge.commandCalls(StartReplayCommand)[0]?.args[0].input;
    expect(start).toMatchObject({
      ReplayName: 'forgebridge-d-1-x',
      EventSourceArn: archiveArn,
      EventStartTime: new Date(receivedAt - 60_000),
      EventEndTime: new Date(receivedAt + 5 * 60_000),
      Destination: {
        Arn: busArn,
        FilterArns: ['arn:aws:events:eu-west-1:123456789012:rule/forgebridge-prod/on-issues'],
      },
    });
    expect(progress).toEqual([
      ['RUNNING', undefined],
      ['RUNNING', 0.5],
      ['COMPLETED', 1],
    ]);
    expect(sleeps).toEqual([1234, 1234, 1234]);
    expect(result).toMatchObject({ name: 'forgebridge-d-1-x', arn: 'arn:replay', state: 'COMPLETED' });
    for (const call of eventBridge.commandCalls(DescribeReplayCommand)) {
      expect(call.args[0].input).toEqual({ ReplayName: 'forgebridge-d-1-x' });
    }
  });

  it('ends the window now at the latest, sends no filter without rules, and returns at once with wait off', async () => {
    eventBridge.on(StartReplayCommand).resolves({ ReplayArn: 'arn:replay', State: 'STARTING' });
    const now = receivedAt + 60_000;
    const result = await archiveReplay({
      eventBridge: new EventBridgeClient({}),
      archiveArn,
      busArn,
      ruleArns: [],
      receivedAt,
      beforeMs: 60_000,
      afterMs: 5 * 60_000,
      name: 'n',
      wait: false,
      pollMs: 1,
      now: () => now,
    });
    const start = eventBridge.commandCalls(StartReplayCommand)[0]?.args[0].input;
    expect(start?.EventEndTime).toEqual(new Date(now));
    expect(start?.Destination).toEqual({ Arn: busArn });
    expect(result.state).toBe('STARTING');
    expect(eventBridge.commandCalls(DescribeReplayCommand)).toHaveLength(0);
  });

  it('reports a failed replay with its reason', async () => {
    eventBridge.on(StartReplayCommand).resolves({ State: 'STARTING' });
    eventBridge.on(DescribeReplayCommand).resolves({ State: 'FAILED', StateReason: 'archive is empty' });
    const result = await archiveReplay({
      eventBridge: new EventBridgeClient({}),
      archiveArn,
      busArn,
      ruleArns: [],
      receivedAt,
      beforeMs: 0,
      afterMs: 60_000,
      name: 'n',
      wait: true,
      pollMs: 1,
      sleep: async () => undefined,
    });
    expect(result).toMatchObject({ state: 'FAILED', reason: 'archive is empty' });
  });

  it('builds the bus ARN from the archive ARN, and a valid replay name', () => {
    expect(busArnOf('forgebridge-prod', archiveArn)).toBe(busArn);
    expect(busArnOf(busArn, 'anything')).toBe(busArn);
    expect(() => busArnOf('b', 'arn:aws:s3:::bucket')).toThrow(
      '"--archive" must be an EventBridge archive ARN',
    );
    const name = replayName(`a/b c${'x'.repeat(100)}`, 0);
    expect(name).toMatch(/^[A-Za-z0-9_.-]{1,64}$/);
    expect(name.startsWith('forgebridge-a-b-cxxx')).toBe(true);
  });
});

describe("a stage's table and AWS failures", () => {
  it('reads the DeliveriesTableName output of the stage stack', async () => {
    cloudFormation.on(DescribeStacksCommand, { StackName: 'forgebridge-prod' }).resolves({
      Stacks: [
        {
          StackName: 'forgebridge-prod',
          CreationTime: new Date(),
          StackStatus: 'UPDATE_COMPLETE',
          Outputs: [{ OutputKey: 'DeliveriesTableName', OutputValue: 'forgebridge-prod-deliveries' }],
        },
      ],
    });
    const target = await resolveLogTarget({ stage: 'prod', region: 'eu-west-1' }, {});
    expect(target).toMatchObject({
      kind: 'aws',
      tableName: 'forgebridge-prod-deliveries',
      region: 'eu-west-1',
      label: 'stage "prod"',
    });
    expect(
      await resolveLogTarget({ stage: 'prod', table: 'given' }, { AWS_REGION: 'us-east-2' }),
    ).toMatchObject({
      tableName: 'given',
      region: 'us-east-2',
    });
    expect(cloudFormation.commandCalls(DescribeStacksCommand)).toHaveLength(1);
  });

  it('says when the stack has no such output or does not exist', async () => {
    cloudFormation.on(DescribeStacksCommand).resolves({
      Stacks: [{ StackName: 's', CreationTime: new Date(), StackStatus: 'CREATE_COMPLETE', Outputs: [] }],
    });
    await expect(stackOutput('s', 'DeliveriesTableName', 'eu-west-1')).rejects.toThrow(
      'stack "s" has no "DeliveriesTableName" output: pass "--table"',
    );
    cloudFormation
      .on(DescribeStacksCommand)
      .rejects(Object.assign(new Error('Stack with id s does not exist'), { name: 'ValidationError' }));
    await expect(stackOutput('s', 'DeliveriesTableName', 'eu-west-1')).rejects.toMatchObject({
      message: 'stack "s" not found: pass "--stack" or "--table"',
      exitCode: 2,
    });
  });

  it('maps SDK failures to one line and an exit code', () => {
    const aws = { kind: 'aws' as const, endpoint: undefined, label: 'stage "dev"', fromState: false };
    const local = {
      kind: 'local' as const,
      endpoint: 'http://127.0.0.1:8000',
      label: 'local stack',
      fromState: true,
    };
    const credentials = Object.assign(new Error('Could not load credentials from any providers'), {
      name: 'CredentialsProviderError',
    });
    expect(awsFailure(credentials, aws, 't')).toMatchObject({
      exitCode: 2,
      message: expect.stringMatching(/^AWS credentials not found for stage "dev"/),
    });
    expect(awsFailure(new Error('Region is missing'), aws, 't')).toMatchObject({
      exitCode: 2,
      message: 'missing AWS region: pass "--region" (or set AWS_REGION)',
    });
    expect(
      awsFailure(Object.assign(new Error('x'), { name: 'ResourceNotFoundException' }), aws, 'table "t"'),
    ).toMatchObject({
      exitCode: 3,
      message: 'table "t" not found (stage "dev")',
    });
    const refused = Object.assign(new Error('connect'), {
      cause: Object.assign(new Error('x'), { code: 'ECONNREFUSED' }),
    });
    expect(awsFailure(refused, local, 't')).toMatchObject({
      exitCode: 3,
      message: 'could not reach http://127.0.0.1:8000: connection refused (is "npm start" running?)',
    });
    expect(
      awsFailure(Object.assign(new Error('denied'), { name: 'AccessDeniedException' }), aws, 'replay'),
    ).toMatchObject({ exitCode: 2 });
    expect(
      awsFailure(Object.assign(new Error('odd'), { name: 'InternalServerError' }), aws, 'replay'),
    ).toMatchObject({
      exitCode: 1,
      message: 'replay failed: InternalServerError: odd',
    });
  });
});

describe('--since, the local state file and the local target', () => {
  const now = Date.parse('2026-11-23T12:00:00Z');

  it('reads durations and dates, and refuses anything else', () => {
    expect(parseSince('30m', now)).toBe(now - 30 * 60_000);
    expect(parseSince('1h', now)).toBe(now - 3_600_000);
    expect(parseSince('2d', now)).toBe(now - 2 * 86_400_000);
    expect(parseSince('2026-11-23T08:00Z', now)).toBe(Date.parse('2026-11-23T08:00:00Z'));
    expect(parseSince('2026-11-23', now)).toBe(Date.parse('2026-11-23T00:00:00Z'));
    for (const bad of ['yesterday', '1y', '-1h', '2026-13-45', '']) {
      expect(() => parseSince(bad, now)).toThrow(
        '"--since" must be a duration (30m, 1h, 2d) or a date and time',
      );
    }
  });

  it('reads the endpoints and tables from the state file, and nothing from a bad one', () => {
    const dir = mkdtempSync(join(tmpdir(), 'forgebridge-cli-state-'));
    try {
      const file = join(dir, 'local-stack.json');
      writeFileSync(
        file,
        JSON.stringify({
          webhookUrl: 'u',
          endpoints: { dynamodb: 'http://127.0.0.1:8001', lambda: 'http://127.0.0.1:3002' },
          names: { deliveriesTable: 'tbl', dedupeTable: 'dd' },
        }),
      );
      expect(readStackState(file)).toEqual({
        webhookUrl: 'u',
        endpoints: { dynamodb: 'http://127.0.0.1:8001', lambda: 'http://127.0.0.1:3002' },
        names: { deliveriesTable: 'tbl', dedupeTable: 'dd' },
      });
      // A field of another type is left out, the rest kept.
      writeFileSync(
        file,
        JSON.stringify({ endpoints: { dynamodb: 8002 }, names: { deliveriesTable: 't2' } }),
      );
      expect(readStackState(file)).toEqual({ names: { deliveriesTable: 't2' } });
      writeFileSync(file, '{ half');
      expect(readStackState(file)).toEqual({});
      expect(readStackState(join(dir, 'missing.json'))).toEqual({});
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('takes --endpoint and the table from the environment, and refuses a bad stage or endpoint', async () => {
    expect(
      await resolveLogTarget(
        { endpoint: 'http://127.0.0.1:8000' },
        { FORGEBRIDGE_DELIVERIES_TABLE: 'from-env' },
      ),
    ).toMatchObject({
      kind: 'local',
      endpoint: 'http://127.0.0.1:8000',
      tableName: 'from-env',
      fromState: false,
    });
    await expect(resolveLogTarget({ endpoint: 'ftp://x' }, {})).rejects.toThrow(
      '"--endpoint" must be an http or https URL',
    );
    await expect(resolveLogTarget({ stage: 'a b' }, {})).rejects.toThrow(
      '"--stage" must be letters, digits and hyphens',
    );
    await expect(resolveLogTarget({ stage: 'dev', endpoint: 'http://x' }, {})).rejects.toThrow(
      '"--endpoint" and "--stage" cannot be used together',
    );
  });
});

describe('replay headers and proxy keys', () => {
  it('keeps the stored headers, signs the masked signatures again and sets the delivery id', () => {
    const raw = Buffer.from('{"action":"opened"}');
    const stored = {
      'content-type': 'application/json',
      'x-gitea-event': 'issues',
      'x-gitea-delivery': 'old-id',
      'x-gitea-signature': '[masked]',
      'x-hub-signature-256': 'sha256=[masked]',
      authorization: '[masked]',
      'content-length': '19',
      'x-extra': 'kept',
    };
    const headers = replayHeaders(stored, raw, { secret: 's3cret', forge: 'gitea', id: 'new-id' });
    expect(headers['x-gitea-delivery']).toBe('new-id');
    expect(headers['x-extra']).toBe('kept');
    expect(headers['content-length']).toBeUndefined();
    expect(headers.authorization).toBeUndefined();
    expect(JSON.stringify(headers)).not.toContain('[masked]');
    const checked = readDelivery(
      { method: 'POST', headers, body: raw },
      { secret: 's3cret', forge: 'gitea' },
    );
    expect(checked).toMatchObject({ ok: true, id: 'new-id' });
  });

  it("signs a delivery logged without its signature header the preset's way", () => {
    const raw = Buffer.from('{}');
    const headers = replayHeaders({ 'x-forge-event': 'push', 'x-forge-delivery': 'd' }, raw, {
      secret: 'k',
      forge: 'generic',
      id: 'd',
    });
    const expected = deliveryHeaders('k', raw, { name: 'push', id: 'd' });
    expect(headers['x-hub-signature-256']).toBe(expected['x-hub-signature-256']);
  });

  it("reads each forge's own headers from a proxy message", () => {
    expect(proxyKeys('generic')).toEqual({
      id: 'x-forge-delivery',
      event: 'x-forge-event',
      signature256: 'x-hub-signature-256',
      signature: 'x-hub-signature',
    });
    expect(proxyKeys('gitlab')).toMatchObject({
      id: 'idempotency-key',
      event: 'x-gitlab-event',
      signature256: 'x-gitlab-token',
    });
    expect(proxyKeys('gitea')).toMatchObject({ id: 'x-gitea-delivery', signature256: 'x-gitea-signature' });
  });
});

describe('replay --hook: which hook of an id is replayed', () => {
  const of = (hook: string | undefined, at: number): DeliveryRecord => ({
    ...record,
    recordId: `r-${hook ?? 'none'}-${at}`,
    receivedAt: at,
    ...(hook === undefined ? {} : { hook }),
    subscribers: hook === undefined ? {} : { [`on-${hook}`]: { outcome: 'ok', durationMs: 1, at } },
  });
  const details = (records: DeliveryRecord[]): DeliveryDetails => {
    const hooks = [...new Set(records.flatMap((r) => (r.hook === undefined ? [] : [r.hook])))];
    return {
      deliveryId: 'd-1',
      source: 'github',
      ...(hooks.length > 0 ? { hooks } : {}),
      latest: records[0] as DeliveryRecord,
      records,
      subscribers: records[0]?.subscribers ?? {},
    };
  };
  // Newest first: hook 2202's record, then hook 1101's and its redelivery.
  const two = details([of('1101', 3), of('2202', 2), of('1101', 1)]);

  it('refuses an id from two hooks without --hook, naming them sorted, exit 2', () => {
    const error = (() => {
      try {
        ofHook(two, undefined);
      } catch (thrown) {
        return thrown;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(CliError);
    expect(error).toMatchObject({
      message: 'delivery d-1 came from 2 hooks (1101, 2202): pass --hook',
      exitCode: 2,
    });
  });

  it("keeps only the hook's records, newest first, with that hook's subscribers", () => {
    const picked = ofHook(two, '2202');
    expect(picked.records.map((r) => r.recordId)).toEqual(['r-2202-2']);
    expect(picked).toMatchObject({
      hooks: ['2202'],
      latest: { hook: '2202' },
      subscribers: { 'on-2202': {} },
    });
    const other = ofHook(two, '1101');
    expect(other.records.map((r) => r.recordId)).toEqual(['r-1101-3', 'r-1101-1']);
    expect(Object.keys(other.subscribers)).toEqual(['on-1101']);
  });

  it('needs no --hook for one hook or none, and refuses a hook the id has no record from', () => {
    const one = details([of('3303', 1)]);
    expect(ofHook(one, undefined)).toBe(one);
    const none = details([of(undefined, 1)]);
    expect(ofHook(none, undefined)).toBe(none);
    expect(() => ofHook(two, '9999')).toThrow(
      'delivery d-1 has no record from hook "9999" (hooks: 1101, 2202)',
    );
    expect(() => ofHook(none, '1101')).toThrow(
      'delivery d-1 has no record from hook "1101" (its records name no hook)',
    );
    expect(() => ofHook(two, '')).toThrow(CliError);
  });
});
