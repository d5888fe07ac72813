import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SecretsError } from '../../../lib/aws/index.js';
import { createSecretsProvider, parseSecretList } from '../../../lib/aws/secrets.js';

const ssmMock = mockClient(SSMClient);

beforeEach(() => {
  ssmMock.reset();
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(Date.UTC(2026, 10, 21, 12));
});
afterEach(() => vi.useRealTimers());

function parameter(value: string) {
  return { Parameter: { Name: '/fb/secret', Type: 'SecureString' as const, Value: value } };
}

describe('parseSecretList()', () => {
  it('splits on commas and newlines, trims, and drops empty entries and repeats', () => {
    expect(parseSecretList(' new ,\nold\r\n\n,new,')).toEqual(['new', 'old']);
    expect(parseSecretList('')).toEqual([]);
  });
});

describe('createSecretsProvider()', () => {
  it('reads a SecureString parameter with decryption and splits the rotation list', async () => {
    ssmMock.on(GetParameterCommand).resolves(parameter('new-secret\nold-secret'));
    const provider = createSecretsProvider(
      { secretParameter: '/fb/secret' },
      {
        ssm: new SSMClient({ region: 'us-east-1' }),
      },
    );
    expect(await provider.getSecrets()).toEqual(['new-secret', 'old-secret']);
    expect(ssmMock.commandCalls(GetParameterCommand)[0]!.args[0].input).toEqual({
      Name: '/fb/secret',
      WithDecryption: true,
    });
  });

  it('caches the secrets for maxAgeSeconds, then fetches again', async () => {
    ssmMock.on(GetParameterCommand).resolvesOnce(parameter('first')).resolves(parameter('second'));
    const provider = createSecretsProvider(
      { secretParameter: '/fb/secret' },
      {
        ssm: new SSMClient({ region: 'us-east-1' }),
        maxAgeSeconds: 60,
      },
    );
    expect(await provider.getSecrets()).toEqual(['first']);
    vi.setSystemTime(Date.now() + 59_000);
    expect(await provider.getSecrets()).toEqual(['first']);
    expect(ssmMock.commandCalls(GetParameterCommand)).toHaveLength(1);
    vi.setSystemTime(Date.now() + 2_000);
    expect(await provider.getSecrets()).toEqual(['second']);
    expect(ssmMock.commandCalls(GetParameterCommand)).toHaveLength(2);
  });

  it('fails with secrets_unavailable when SSM cannot be reached, without the value', async () => {
    ssmMock
      .on(GetParameterCommand)
      .rejects(Object.assign(new Error('denied'), { name: 'AccessDeniedException' }));
    const provider = createSecretsProvider(
      { secretParameter: '/fb/secret' },
      {
        ssm: new SSMClient({ region: 'us-east-1' }),
      },
    );
    const error = await provider.getSecrets().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(SecretsError);
    expect(error).toMatchObject({
      code: 'secrets_unavailable',
      message: 'parameter "/fb/secret" could not be read',
    });
  });

  it('fails with secrets_missing for an empty parameter, and never puts the value in the message', async () => {
    ssmMock.on(GetParameterCommand).resolves(parameter(' , \n'));
    const provider = createSecretsProvider(
      { secretParameter: '/fb/secret' },
      {
        ssm: new SSMClient({ region: 'us-east-1' }),
      },
    );
    await expect(provider.getSecrets()).rejects.toMatchObject({
      code: 'secrets_missing',
      message: 'parameter "/fb/secret" holds no secret',
    });
  });

  it('with single, keeps the whole trimmed value as one secret (an OAuth client secret may hold a comma)', async () => {
    ssmMock.on(GetParameterCommand).resolvesOnce(parameter(' a,b\n')).resolves(parameter(' \n'));
    const provider = createSecretsProvider(
      { secretParameter: '/fb/secret' },
      {
        ssm: new SSMClient({ region: 'us-east-1' }),
        single: true,
        maxAgeSeconds: 0,
      },
    );
    expect(await provider.getSecrets()).toEqual(['a,b']);
    await expect(provider.getSecrets()).rejects.toMatchObject({
      code: 'secrets_missing',
      message: 'parameter "/fb/secret" holds no secret',
    });
  });

  it('requires a parameter name unless offline', () => {
    expect(() => createSecretsProvider({}, { env: {} })).toThrow(
      new TypeError('"secretParameter" is required unless running offline'),
    );
  });

  it('reads the environment variable when IS_OFFLINE is set, never SSM', async () => {
    const provider = createSecretsProvider(
      { secretParameter: '/fb/secret' },
      {
        env: { IS_OFFLINE: 'true', FORGEBRIDGE_WEBHOOK_SECRET: 'dev-secret,older' },
      },
    );
    expect(await provider.getSecrets()).toEqual(['dev-secret', 'older']);
    expect(ssmMock.commandCalls(GetParameterCommand)).toHaveLength(0);
  });

  it('reads a configured variable when the offline flag is given', async () => {
    const provider = createSecretsProvider(
      { secretEnv: 'FB_SECRET' },
      { offline: true, env: { FB_SECRET: 's' } },
    );
    expect(await provider.getSecrets()).toEqual(['s']);
  });

  it('ignores a plaintext environment secret when not offline', async () => {
    ssmMock.on(GetParameterCommand).resolves(parameter('from-ssm'));
    const provider = createSecretsProvider(
      { secretParameter: '/fb/secret' },
      {
        ssm: new SSMClient({ region: 'us-east-1' }),
        env: { IS_OFFLINE: 'false', FORGEBRIDGE_WEBHOOK_SECRET: 'plaintext' },
      },
    );
    expect(await provider.getSecrets()).toEqual(['from-ssm']);
  });

  it('fails with secrets_missing offline when the variable is empty', async () => {
    const provider = createSecretsProvider({}, { offline: true, env: {} });
    await expect(provider.getSecrets()).rejects.toMatchObject({
      code: 'secrets_missing',
      message: 'no secret in environment variable "FORGEBRIDGE_WEBHOOK_SECRET"',
    });
  });
});
