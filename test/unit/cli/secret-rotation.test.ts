// `forgebridge secret rotate` / `finish` on a stage, with the SSM and Lambda clients mocked (aws-sdk-client-mock),
// and the rotation's rules (the new secret's form, the list's order, the log check).
import { GetFunctionConfigurationCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { GetParameterCommand, PutParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import type { DeliveryRecord } from '../../../lib/aws/index.js';
import { checkRecords, finishedList, newSecretFor, rotatedList } from '../../../lib/cli/secret-rotation.js';
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

/** The SSM parameter, as the mock holds it. */
let stored: Record<string, string>;

beforeEach(() => {
  ssm.reset();
  lambda.reset();
  stored = { [PARAMETER]: CURRENT, '/forgebridge/prod/webhook-secret/mail': standardSecret() };
  lambda.on(GetFunctionConfigurationCommand).resolves({ Environment: { Variables: STAGE_ENV } });
  ssm.on(GetParameterCommand).callsFake((input: { Name: string; WithDecryption?: boolean }) => {
    const value = stored[input.Name];
    if (value === undefined) throw Object.assign(new Error('not found'), { name: 'ParameterNotFound' });
    return { Parameter: { Name: input.Name, Type: 'SecureString', Value: value } };
  });
  ssm.on(PutParameterCommand).callsFake((input: { Name: string; Value: string }) => {
    stored[input.Name] = input.Value;
    return { Version: 2 };
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
