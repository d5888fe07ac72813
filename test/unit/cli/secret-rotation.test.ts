// `forgebridge secret rotate` / `finish` on a stage, with the SSM and Lambda clients mocked (aws-sdk-client-mock),
// and the rotation's rules (the new secret's form, the list's order, the log check).
import { GetFunctionConfigurationCommand, LambdaClient } from '@aws-sdk/client-lambda';
import {
  DescribeParametersCommand,
  GetParameterCommand,
  PutParameterCommand,
  SSMClient,
} from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import type { DeliveryRecord } from '../../../lib/aws/index.js';
import {
  checkLog,
  checkRecords,
  finishedList,
  newSecretFor,
  provingSince,
  rotatedList,
} from '../../../lib/cli/secret-rotation.js';
import { readDelivery, sign, standardSecret } from '../../../lib/webhooks/index.js';
import { runMain } from '../../helpers/cli-in-process.js';

const ssm = mockClient(SSMClient);
const lambda = mockClient(LambdaClient);

const PARAMETER = '/forgebridge/prod/webhook-secret/github';
const CURRENT = 'the-current-secret-of-github';
const STAGE_ENV = {
  FORGEBRIDGE_BUS_NAME: 'bus',
  FORGEBRIDGE_DEDUPE_TABLE: 'dedupe',
  FORGEBRIDGE_WEBHOOK_SOURCES: JSON.stringify([
    { name: 'default', secretParameter: '/forgebridge/prod/webhook-secret' },
    { name: 'github', forge: 'github', secretParameter: PARAMETER },
    { name: 'mail', forge: 'standard', secretParameter: '/forgebridge/prod/webhook-secret/mail' },
  ]),
};
const STAGE = ['--stage', 'prod', '--region', 'eu-west-1'];

/** The SSM parameter, as the mock holds it, with its version. */
let stored: Record<string, string>;
let versions: Record<string, number>;
const KEY = 'arn:aws:kms:eu-west-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab';

beforeEach(() => {
  ssm.reset();
  lambda.reset();
  stored = { [PARAMETER]: CURRENT, '/forgebridge/prod/webhook-secret/mail': standardSecret() };
  versions = {};
  ssm.on(DescribeParametersCommand).callsFake((input: { ParameterFilters: { Values: string[] }[] }) => ({
    Parameters: input.ParameterFilters[0]?.Values.map((Name) => ({ Name, Type: 'SecureString', KeyId: KEY })),
  }));
  lambda.on(GetFunctionConfigurationCommand).resolves({ Environment: { Variables: STAGE_ENV } });
  ssm.on(GetParameterCommand).callsFake((input: { Name: string; WithDecryption?: boolean }) => {
    const value = stored[input.Name];
    if (value === undefined) throw Object.assign(new Error('not found'), { name: 'ParameterNotFound' });
    const Version = versions[input.Name] ?? 1;
    return { Parameter: { Name: input.Name, Type: 'SecureString', Value: value, Version } };
  });
  ssm.on(PutParameterCommand).callsFake((input: { Name: string; Value: string }) => {
    stored[input.Name] = input.Value;
    versions[input.Name] = (versions[input.Name] ?? 1) + 1;
    return { Version: versions[input.Name] };
  });
});

function record(secretIndex: number | undefined): DeliveryRecord {
  return {
    recordId: 'r',
    receivedAt: 0,
    bodyBytes: 2,
    verdict: 'verified',
    httpStatus: 202,
    outcome: 'published',
    expiresAt: 0,
    ...(secretIndex === undefined ? {} : { secretIndex }),
  };
}

describe('the rotation rules', () => {
  it('a new secret in the form of the preset: whsec_ for standard and svix, 64 hex otherwise', () => {
    for (const forge of ['standard', 'svix'] as const) {
      const secret = newSecretFor(forge);
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);
    }
    for (const forge of ['generic', 'github', 'gitlab', 'gitea', 'bitbucket'] as const) {
      expect(newSecretFor(forge)).toMatch(/^[0-9a-f]{64}$/);
    }
    expect(newSecretFor('github')).not.toBe(newSecretFor('github'));
  });

  it('the current secret stays first, the new one second; a second rotation and a finish without one are refused', () => {
    expect(rotatedList(['old'], 'new')).toEqual(['old', 'new']);
    expect(() => rotatedList(['old', 'new'], 'newer')).toThrow(/rotation is under way/);
    expect(() => rotatedList([], 'new')).toThrow(/no secret yet/);
    expect(finishedList(['old', 'new'])).toEqual(['new']);
    expect(() => finishedList(['old'])).toThrow(/no rotation under way/);
  });

  it('finish wants the last N verified deliveries all verified by the new secret', () => {
    expect(checkRecords([record(1), record(1), record(1)], 3)).toMatchObject({ ok: true, withNew: 3 });
    expect(checkRecords([record(1), record(1), record(0)], 3)).toMatchObject({
      ok: false,
      withNew: 2,
      reason: expect.stringMatching(
        /^1 of the source's last 3 verified deliveries were signed with the old secret/,
      ),
    });
    // Records from before the log kept the position count as the old secret's.
    expect(checkRecords([record(1), record(undefined)], 2).ok).toBe(false);
    expect(checkRecords([record(1)], 2)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/holds 1 verified delivery/),
    });
    expect(checkRecords([record(1), record(1), record(0)], 2).ok).toBe(true);
  });
});

describe('forgebridge secret rotate --stage', () => {
  it("adds a 64-hex secret after the current one in the source's parameter, as a SecureString, and prints it once", async () => {
    const run = await runMain(['secret', 'rotate', '--source', 'github', ...STAGE]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const [current, fresh] = stored[PARAMETER]?.split(',') ?? [];
    expect(current).toBe(CURRENT);
    expect(fresh).toMatch(/^[0-9a-f]{64}$/);
    expect(run.stdout.split(fresh as string)).toHaveLength(2);
    expect(run.stdout).not.toContain(CURRENT);
    expect(run.stdout).toContain('forgebridge secret finish --source github --stage prod');
    expect(lambda.commandCalls(GetFunctionConfigurationCommand)[0]?.args[0].input).toEqual({
      FunctionName: 'forgebridge-prod-ingest',
    });
    expect(ssm.commandCalls(GetParameterCommand)[0]?.args[0].input).toEqual({
      Name: PARAMETER,
      WithDecryption: true,
    });
    expect(ssm.commandCalls(PutParameterCommand)[0]?.args[0].input).toMatchObject({
      Name: PARAMETER,
      Type: 'SecureString',
      Overwrite: true,
    });
    // The ingest's list now verifies a delivery signed with either, and says which.
    const body = '{"zen":"yes"}';
    const headers = (secret: string) => ({
      'content-type': 'application/json',
      'x-github-event': 'ping',
      'x-github-delivery': 'd-1',
      'x-hub-signature-256': sign(secret, body),
    });
    const secrets = [current as string, fresh as string];
    for (const [index, secret] of secrets.entries()) {
      const result = readDelivery({ headers: headers(secret), body }, { secret: secrets, forge: 'github' });
      expect(result.ok && result.secretIndex).toBe(index);
    }
  });

  it('gives a Standard Webhooks source a whsec_ secret', async () => {
    const run = await runMain(['secret', 'rotate', '--source', 'mail', ...STAGE]);
    expect(run.code).toBe(0);
    expect(stored['/forgebridge/prod/webhook-secret/mail']).toMatch(/^whsec_\S+,whsec_\S+$/);
  });

  it('takes --parameter and --forge without reading the function', async () => {
    const run = await runMain([
      'secret',
      'rotate',
      '--source',
      'github',
      '--parameter',
      PARAMETER,
      '--forge',
      'svix',
      ...STAGE,
    ]);
    expect(run.code).toBe(0);
    expect(lambda.commandCalls(GetFunctionConfigurationCommand)).toHaveLength(0);
    expect(stored[PARAMETER]).toMatch(new RegExp(`^${CURRENT},whsec_`));
  });

  it('refuses a second rotation, an unknown source and a bad name with one line, and writes nothing', async () => {
    stored[PARAMETER] = `${CURRENT},second`;
    const twice = await runMain(['secret', 'rotate', '--source', 'github', ...STAGE]);
    expect(twice.code).toBe(2);
    expect(twice.stderr).toMatch(/^forgebridge: a rotation is under way .*secret finish/);
    const unknown = await runMain(['secret', 'rotate', '--source', 'nope', ...STAGE]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('has no source "nope" (its sources: default, github, mail)');
    const bad = await runMain(['secret', 'rotate', '--source', 'Bad Name', ...STAGE]);
    expect(bad.code).toBe(2);
    expect(ssm.commandCalls(PutParameterCommand)).toHaveLength(0);
    expect(`${twice.stderr}${unknown.stderr}`).not.toContain(CURRENT);
  });
});

describe('forgebridge secret finish --stage --force', () => {
  it('leaves the new secret alone; refuses when no rotation is under way', async () => {
    stored[PARAMETER] = `${CURRENT},the-new-one`;
    const run = await runMain(['secret', 'finish', '--source', 'github', '--force', ...STAGE]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(stored[PARAMETER]).toBe('the-new-one');
    const again = await runMain(['secret', 'finish', '--source', 'github', '--force', ...STAGE]);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/^forgebridge: no rotation under way/);
    expect(ssm.commandCalls(PutParameterCommand)).toHaveLength(1);
  });

  it('checks "--deliveries"', async () => {
    const run = await runMain(['secret', 'finish', '--source', 'github', '--deliveries', '0', ...STAGE]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('"--deliveries" must be a whole number from 1 to 1000');
  });
});

describe('forgebridge secret rotate / finish --stage: the parameter as it is', () => {
  it("keeps the parameter's own KMS key when it overwrites it", async () => {
    const run = await runMain(['secret', 'rotate', '--source', 'github', ...STAGE]);
    expect(run.code).toBe(0);
    expect(ssm.commandCalls(PutParameterCommand)[0]?.args[0].input).toMatchObject({
      Name: PARAMETER,
      KeyId: KEY,
    });
  });

  it('refuses, and writes nothing, when the key cannot be read', async () => {
    ssm
      .on(DescribeParametersCommand)
      .rejects(Object.assign(new Error('denied'), { name: 'AccessDeniedException' }));
    const run = await runMain(['secret', 'rotate', '--source', 'github', ...STAGE]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      `forgebridge: parameter "${PARAMETER}" left unchanged: its KMS key could not be read (ssm:DescribeParameters: AccessDeniedException)`,
    );
    expect(ssm.commandCalls(PutParameterCommand)).toHaveLength(0);
    expect(run.stdout + run.stderr).not.toContain(CURRENT);
  });

  it('refuses to overwrite a list another rotation changed while it ran, and writes nothing', async () => {
    stored[PARAMETER] = `${CURRENT},the-new-one`;
    // Someone else's rotate lands between finish's read and its write.
    let reads = 0;
    ssm.on(GetParameterCommand).callsFake((input: { Name: string }) => {
      reads += 1;
      const Version = reads === 1 ? 3 : 4;
      return { Parameter: { Name: input.Name, Type: 'SecureString', Value: stored[input.Name], Version } };
    });
    const run = await runMain(['secret', 'finish', '--source', 'github', '--force', ...STAGE]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      `parameter "${PARAMETER}" left unchanged: it changed while this ran (version 3, now 4), maybe another rotation`,
    );
    expect(ssm.commandCalls(PutParameterCommand)).toHaveLength(0);
    expect(run.stderr).not.toContain('the-new-one');
  });
});

describe('checkLog(): only deliveries verified against the current list count', () => {
  /** A log of `rows` (newest first), filtered by `since` as the delivery log's index is. */
  const fakeLog = (rows: DeliveryRecord[]) => {
    const queries: { since?: unknown }[] = [];
    const log = {
      async list(query: { since?: number; limit: number }) {
        queries.push(query);
        const records = rows.filter((row) => (row.receivedAt as number) >= (query.since ?? 0));
        return { records: records.slice(0, query.limit) };
      },
      async get() {
        return undefined;
      },
    };
    return { log: log as unknown as Parameters<typeof checkLog>[0], queries };
  };
  const at = (receivedAt: number, secretIndex: number) => ({ ...record(secretIndex), receivedAt });

  it("refuses a second rotation's finish on the first one's rows: they predate the list's change and the secret cache", async () => {
    const changedAt = Date.now() - 60_000;
    // The first rotation's new secret (then at position 1) verified these, before [B,C] was stored.
    const { log, queries } = fakeLog([
      at(changedAt - 1_000, 1),
      at(changedAt - 2_000, 1),
      at(changedAt - 3_000, 1),
    ]);
    const check = await checkLog(log, 'github', 3, provingSince(changedAt));
    expect(check).toMatchObject({ ok: false, seen: 0 });
    expect(check.reason).toContain('the log holds 0 verified deliveries of the source since');
    // Still inside the ingest's 5-minute secret cache: the log is not even read.
    expect(queries).toEqual([]);
  });

  it('counts the deliveries received once the cache has expired', async () => {
    const changedAt = Date.now() - 10 * 60_000;
    const since = provingSince(changedAt);
    expect(since).toBe(changedAt + 300_000);
    const rows = [at(since + 3, 1), at(since + 2, 1), at(since + 1, 1), at(since - 1, 0)];
    const { log, queries } = fakeLog(rows);
    expect(await checkLog(log, 'github', 3, since)).toMatchObject({ ok: true, seen: 3, withNew: 3 });
    expect(queries[0]).toMatchObject({ since, limit: 3, verdict: 'verified', source: 'github' });
    expect((await checkLog(fakeLog(rows).log, 'github', 4, since)).ok).toBe(false);
  });
});
