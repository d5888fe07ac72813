/**
 * `forgebridge secret rotate` / `finish`: the rules of a webhook secret rotation (the new secret's form, the
 * order of the list, when the old one may go) and the SSM parameter that holds a deployed source's list.
 *
 * The list during a rotation is `current,new`: the ingest verifies a delivery signed with either, and the
 * delivery log records which one by position, so `1` means the forge signs with the new secret. `finish`
 * leaves `new` alone.
 */
import { GetFunctionConfigurationCommand, type LambdaClient } from '@aws-sdk/client-lambda';
import {
  DescribeParametersCommand,
  GetParameterCommand,
  PutParameterCommand,
  type SSMClient,
} from '@aws-sdk/client-ssm';
import {
  AwsDefaults,
  type DeliveryLog,
  type DeliveryRecord,
  parseSecretList,
  readIngestConfig,
  type WebhookSourceConfig,
} from '../aws/internal.js';
import { type Forge, forgeSecret } from '../webhooks/index.js';
import { CliError, ExitCodes } from './errors.js';

/** How many of the source's latest verified deliveries `finish` wants signed with the new secret, by default. */
export const DEFAULT_FINISH_DELIVERIES = 5;

/** Where the new secret sits in the list during a rotation (0 = first). */
export const NEW_SECRET_POSITION = 1;

/** A fresh secret in the form the source's preset takes: `whsec_` + 32 random bytes for Standard Webhooks, else 64 hex. */
export function newSecretFor(forge: Forge): string {
  return forgeSecret(forge);
}

/** The list while rotating: the current secret, then the new one. @throws CliError when a rotation is under way. */
export function rotatedList(current: readonly string[], fresh: string): string[] {
  if (current.length === 0) throw new CliError('the source has no secret yet: set one before rotating it');
  if (current.length > 1) {
    throw new CliError(
      `a rotation is under way (the source holds ${current.length} secrets): run "forgebridge secret finish" first`,
    );
  }
  return [current[0] as string, fresh];
}

/** The list once the rotation is over: the new secret alone. @throws CliError when no rotation is under way. */
export function finishedList(current: readonly string[]): string[] {
  if (current.length !== 2) {
    throw new CliError(
      `no rotation under way (the source holds ${current.length} secret${current.length === 1 ? '' : 's'}, a rotation holds 2)`,
    );
  }
  return [current[NEW_SECRET_POSITION] as string];
}

/**
 * From when a delivery proves the forge signs with the new secret: the list's change plus the ingest's secret
 * cache (a warm ingest keeps the list it read for that long). A delivery logged before it was verified against an
 * older list, whose position 1 may have held another secret (the previous rotation's new one).
 */
export function provingSince(listChangedAt: number): number {
  return listChangedAt + AwsDefaults.secretsMaxAgeSeconds * 1000;
}

/** What `finish` read of the log: the latest verified deliveries of the source and how many used the new secret. */
export interface FinishCheck {
  readonly ok: boolean;
  /** Verified deliveries read, newest first (at most `wanted`). */
  readonly seen: number;
  /** Of those, how many the new secret verified. */
  readonly withNew: number;
  readonly wanted: number;
  /** Why the old secret must stay, in one line (when not ok). */
  readonly reason?: string;
}

/** Whether the `wanted` latest verified deliveries (newest first) were all verified by the new secret. */
export function checkRecords(
  records: readonly DeliveryRecord[],
  wanted: number,
  since?: number | undefined,
): FinishCheck {
  const received = (record: DeliveryRecord) => new Date(record.receivedAt).getTime();
  const latest = records
    .filter((record) => since === undefined || received(record) >= since)
    .slice(0, wanted);
  const withNew = latest.filter((record) => record.secretIndex === NEW_SECRET_POSITION).length;
  const base = { seen: latest.length, withNew, wanted };
  if (latest.length < wanted) {
    return {
      ...base,
      ok: false,
      reason: `the log holds ${latest.length} verified deliver${latest.length === 1 ? 'y' : 'ies'} of the source${since === undefined ? '' : ` since ${new Date(since).toISOString()} (when the current list took effect)`}, ${wanted} wanted: wait for more, or pass "--force"`,
    };
  }
  if (withNew < wanted) {
    return {
      ...base,
      ok: false,
      reason: `${wanted - withNew} of the source's last ${wanted} verified deliveries were signed with the old secret: paste the new one into the forge, or pass "--force"`,
    };
  }
  return { ...base, ok: true };
}

/**
 * Reads the source's latest `wanted` verified deliveries received from `since` on and checks them: the list index
 * holds no `secretIndex`, so each record is read whole (one query per delivery).
 */
export async function checkLog(
  log: DeliveryLog,
  source: string,
  wanted: number,
  since: number,
): Promise<FinishCheck> {
  if (since > Date.now()) return checkRecords([], wanted, since);
  const page = await log.list({ source, verdict: 'verified', limit: wanted, since });
  const records: DeliveryRecord[] = [];
  for (const summary of page.records) {
    const whole =
      summary.deliveryId === undefined
        ? undefined
        : (await log.get(summary.deliveryId, { source }))?.records.find(
            (r) => r.recordId === summary.recordId,
          );
    records.push(whole ?? summary);
  }
  return checkRecords(records, wanted, since);
}

/** A secret list as read, with what a later write compares against. */
export interface SecretListState {
  readonly secrets: string[];
  /** The parameter's version (SSM), `undefined` where none is kept. */
  readonly version: number | undefined;
  /** When the list last changed, epoch ms (`LastModifiedDate`; 0 for a parameter that does not exist). */
  readonly changedAt: number;
}

/** A source's secret list in an SSM parameter (SecureString). */
export class ParameterSecrets {
  readonly #ssm: SSMClient;
  readonly #name: string;

  constructor(ssm: SSMClient, name: string) {
    this.#ssm = ssm;
    this.#name = name;
  }

  get name(): string {
    return this.#name;
  }

  /** The list, decrypted, with its version and change time; `[]` for a parameter that does not exist. */
  async read(): Promise<SecretListState> {
    try {
      const answer = await this.#ssm.send(
        new GetParameterCommand({ Name: this.#name, WithDecryption: true }),
      );
      return {
        secrets: parseSecretList(answer.Parameter?.Value ?? ''),
        version: answer.Parameter?.Version,
        changedAt: answer.Parameter?.LastModifiedDate?.getTime() ?? 0,
      };
    } catch (error) {
      if ((error as { name?: unknown } | null)?.name === 'ParameterNotFound') {
        return { secrets: [], version: undefined, changedAt: 0 };
      }
      throw error;
    }
  }

  /**
   * Overwrites the parameter with the list, comma-separated, as a SecureString under the KMS key it has: only if
   * it is still at `read`'s version (someone else's rotation meanwhile is not lost).
   *
   * @throws CliError when the parameter changed since it was read, or its key cannot be read.
   */
  async write(secrets: readonly string[], read: SecretListState): Promise<void> {
    // PutParameter with Overwrite and no KeyId moves a SecureString to aws/ssm: keep the parameter's own key.
    let keyId: string | undefined;
    try {
      const described = await this.#ssm.send(
        new DescribeParametersCommand({ ParameterFilters: [{ Key: 'Name', Values: [this.#name] }] }),
      );
      keyId = described?.Parameters?.find((parameter) => parameter.Name === this.#name)?.KeyId;
    } catch (error) {
      throw new CliError(
        `parameter "${this.#name}" left unchanged: its KMS key could not be read (ssm:DescribeParameters: ${(error as { name?: string }).name ?? 'error'}), and overwriting it without the key would move it to aws/ssm`,
        ExitCodes.failed,
      );
    }
    const now = await this.read();
    if (now.version !== read.version) {
      throw new CliError(
        `parameter "${this.#name}" left unchanged: it changed while this ran (version ${read.version ?? 'none'}, now ${now.version ?? 'none'}), maybe another rotation: run the command again`,
        ExitCodes.failed,
      );
    }
    await this.#ssm.send(
      new PutParameterCommand({
        Name: this.#name,
        Value: secrets.join(','),
        Type: 'SecureString',
        Overwrite: true,
        ...(keyId === undefined ? {} : { KeyId: keyId }),
      }),
    );
  }
}

/** A deployed source as the ingest function's environment configures it. */
export interface StageSource {
  readonly name: string;
  readonly forge: Forge;
  readonly parameter: string | undefined;
}

/**
 * The source named `name`, read from the ingest function's environment (GetFunctionConfiguration), the way
 * the ingest reads it at its cold start.
 *
 * @throws CliError when the function's configuration is invalid or has no such source.
 */
export async function stageSource(
  lambda: LambdaClient,
  functionName: string,
  name: string,
): Promise<StageSource> {
  const answer = await lambda.send(new GetFunctionConfigurationCommand({ FunctionName: functionName }));
  let sources: readonly WebhookSourceConfig[];
  try {
    sources = readIngestConfig({ ...answer.Environment?.Variables, IS_OFFLINE: '' }).sources;
  } catch (error) {
    throw new CliError(
      `function "${functionName}" is not configured as an ingest: ${(error as Error).message}`,
    );
  }
  const source = sources.find((candidate) => candidate.name === name);
  if (source === undefined) {
    const known = sources.map((candidate) => candidate.name).join(', ');
    throw new CliError(
      `function "${functionName}" has no source "${name}" (its sources: ${known})`,
      ExitCodes.usage,
    );
  }
  return { name, forge: source.forge, parameter: source.secretParameter };
}
