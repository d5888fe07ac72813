/**
 * Reading a function's configuration from its environment. Wiring only: every value is named in
 * serverless.yml (`provider.environment` and `functions.*.environment`) and documented in docs/serverless.md.
 */

/** The environment the functions read; `process.env` unless a test passes its own. */
export type Env = Record<string, string | undefined>;

/**
 * A required variable: a `TypeError` naming it when it is missing or empty, so a misconfigured function fails at
 * its cold start instead of on the first delivery.
 *
 * @example
 * ```ts
 * const tableName = requireEnv('FORGEBRIDGE_DEDUPE_TABLE');
 * ```
 * @see https://docs.aws.amazon.com/lambda/latest/dg/configuration-envvars.html
 */
export function requireEnv(name: string, env: Env = process.env): string {
  const value = env[name];
  if (value === undefined || value === '') throw new TypeError(`environment variable "${name}" is required`);
  return value;
}

/**
 * An optional variable: `undefined` when it is missing or empty.
 *
 * @example
 * ```ts
 * const bucket = optionalEnv('FORGEBRIDGE_BUCKET');
 * ```
 * @see https://docs.aws.amazon.com/lambda/latest/dg/configuration-envvars.html
 */
export function optionalEnv(name: string, env: Env = process.env): string | undefined {
  const value = env[name];
  return value === undefined || value === '' ? undefined : value;
}

/**
 * An optional positive number: `undefined` when missing or empty (the library default then applies), a
 * `TypeError` naming the variable when it is not a positive number.
 *
 * @example
 * ```ts
 * const maxEntryBytes = numberEnv('FORGEBRIDGE_MAX_ENTRY_BYTES'); // 262144 or undefined
 * ```
 * @see https://docs.aws.amazon.com/lambda/latest/dg/configuration-envvars.html
 */
export function numberEnv(name: string, env: Env = process.env): number | undefined {
  const value = optionalEnv(name, env);
  if (value === undefined) return undefined;
  const number = Number(value);
  if (!Number.isFinite(number) || number <= 0) {
    throw new TypeError(`environment variable "${name}" must be a positive number`);
  }
  return number;
}
