import { SSMProvider } from '@aws-lambda-powertools/parameters/ssm';
import type { SSMClient } from '@aws-sdk/client-ssm';
import { AwsDefaults, AwsErrorCodes } from './constants.js';
import type { Env } from './env.js';
import { SecretsError } from './errors.js';
import { isOffline } from './rules.js';

/**
 * Where a secret is kept, in the fields a webhook source and an OAuth client name it with: {@link
 * createSecretsProvider} takes such an object as it is.
 */
export interface SecretLocation {
  /** SSM parameter (SecureString) holding the secret, or several separated by commas or newlines. */
  readonly secretParameter?: string | undefined;
  /** Variable holding the secret(s) when offline. Default: the provider's `defaultSecretEnv`. */
  readonly secretEnv?: string | undefined;
}

/** Options of {@link createSecretsProvider}. Defaults live in {@link AwsDefaults}. */
export interface SecretsProviderOptions {
  /** SSM client. Default: one constructed by Powertools on first use. */
  ssm?: SSMClient | undefined;
  /** How long fetched secrets are reused, in seconds. Default 300. */
  maxAgeSeconds?: number | undefined;
  /** Read the secrets from an environment variable instead of SSM. Default: `IS_OFFLINE` is set (serverless-offline). */
  offline?: boolean | undefined;
  /** Variable holding the secrets when offline and the location names none. Default `'FORGEBRIDGE_WEBHOOK_SECRET'`. */
  defaultSecretEnv?: string | undefined;
  /** The value is one secret (trimmed), not a list: an OAuth client secret may hold a comma. Default `false`. */
  single?: boolean | undefined;
  /** Environment to read (tests). Default `process.env`. */
  env?: Env | undefined;
}

/** Supplies the current secrets, newest first (any of a webhook's rotation list verifies a delivery). */
export interface SecretsProvider {
  getSecrets(): Promise<string[]>;
}

/** Splits a secret list: separated by commas or newlines, trimmed, empty entries and repeats dropped. */
export function parseSecretList(value: string): string[] {
  const secrets: string[] = [];
  for (const part of value.split(/[,\r\n]/)) {
    const secret = part.trim();
    if (secret !== '' && !secrets.includes(secret)) secrets.push(secret);
  }
  return secrets;
}

/**
 * Secrets from SSM Parameter Store (SecureString, decrypted, cached for `maxAgeSeconds` by Powertools), or from
 * an environment variable when running offline. A secret never appears in a log line or an error message.
 *
 * @example
 * ```ts
 * const provider = createSecretsProvider({ secretParameter: '/forgebridge/webhook-secret' }, { ssm: new SSMClient({}) });
 * const secrets = await provider.getSecrets();
 * ```
 */
export function createSecretsProvider(
  location: SecretLocation,
  options: SecretsProviderOptions = {},
): SecretsProvider {
  const env = options.env ?? process.env;
  const offline = options.offline ?? isOffline(env);
  const maxAge = options.maxAgeSeconds ?? AwsDefaults.secretsMaxAgeSeconds;
  if (!(maxAge >= 0)) throw new TypeError('"maxAgeSeconds" must be a non-negative number');
  const parse = (value: string) =>
    options.single === true ? [value.trim()].filter(Boolean) : parseSecretList(value);
  if (offline) {
    const secretEnv = location.secretEnv ?? options.defaultSecretEnv ?? AwsDefaults.secretsEnvVar;
    return {
      async getSecrets() {
        const secrets = parse(env[secretEnv] ?? '');
        if (secrets.length === 0) {
          throw new SecretsError(
            AwsErrorCodes.secretsMissing,
            `no secret in environment variable "${secretEnv}"`,
          );
        }
        return secrets;
      },
    };
  }
  const { secretParameter } = location;
  if (!secretParameter) throw new TypeError('"secretParameter" is required unless running offline');
  let provider: SSMProvider | undefined;
  return {
    async getSecrets() {
      provider ??= new SSMProvider(options.ssm === undefined ? {} : { awsSdkV3Client: options.ssm });
      let value: string | undefined;
      try {
        value = await provider.get(secretParameter, { decrypt: true, maxAge });
      } catch (error) {
        throw new SecretsError(
          AwsErrorCodes.secretsUnavailable,
          `parameter "${secretParameter}" could not be read`,
          {
            cause: error,
          },
        );
      }
      const secrets = parse(value ?? '');
      if (secrets.length === 0) {
        throw new SecretsError(
          AwsErrorCodes.secretsMissing,
          `parameter "${secretParameter}" holds no secret`,
        );
      }
      return secrets;
    },
  };
}
