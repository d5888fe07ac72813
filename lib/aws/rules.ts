/**
 * The small rules lib/aws applies in several places, each defined once: what a delivery id and a source name may
 * be, a positive option, an SDK error's code, and whether the function runs under serverless-offline.
 */
import { AwsDefaults } from './constants.js';
import type { Env } from './env.js';

const DELIVERY_ID = new RegExp(`^[\\x21-\\x7e]{1,${AwsDefaults.maxDeliveryIdLength}}$`);

/** The words that describe a valid delivery id, for error messages (`"--id" must be ${DELIVERY_ID_RULE}`). */
export const DELIVERY_ID_RULE = `1 to ${AwsDefaults.maxDeliveryIdLength} visible ascii characters`;

/**
 * A delivery id the stack takes ({@link DELIVERY_ID_RULE}: forges send UUIDs or counters). It becomes DynamoDB and
 * S3 keys and log fields, so nothing else passes.
 */
export function isDeliveryId(id: unknown): id is string {
  return typeof id === 'string' && DELIVERY_ID.test(id);
}

/**
 * The source `/webhooks` (no source in the path) serves: its deliveries keep the dedupe and queue keys they had
 * before there were sources.
 */
export const DEFAULT_SOURCE = 'default';

const SOURCE_NAME = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;

/** The words that describe a valid source name, for error messages (`"--source" must be ${SOURCE_NAME_RULE}`). */
export const SOURCE_NAME_RULE = '1 to 64 lowercase letters, digits or inner hyphens (a url path segment)';

/** A webhook source's name ({@link SOURCE_NAME_RULE}): a url path segment and part of keys. */
export function isSourceName(name: unknown): name is string {
  return typeof name === 'string' && SOURCE_NAME.test(name);
}

/**
 * An option that must be a positive number (at most `max` when given): the value, or a `TypeError` naming the
 * option.
 */
export function positive(name: string, value: number, max = Number.POSITIVE_INFINITY): number {
  if (!Number.isFinite(value) || value <= 0 || value > max) {
    throw new TypeError(
      Number.isFinite(max)
        ? `"${name}" must be a number from 1 to ${max}`
        : `"${name}" must be a positive number`,
    );
  }
  return value;
}

/** The code of any error (an SDK error's `code`, else its `name`), for records and log lines; never its message. */
export function errorCode(error: unknown): string {
  if (typeof error === 'object' && error !== null) {
    if ('code' in error && typeof error.code === 'string') return error.code;
    if ('name' in error && typeof error.name === 'string') return error.name;
  }
  return 'unknown';
}

/** Running under serverless-offline (`IS_OFFLINE` set and not `false` or `0`): secrets come from variables. */
export function isOffline(env: Env): boolean {
  const flag = env.IS_OFFLINE?.toLowerCase();
  return flag !== undefined && flag !== '' && flag !== 'false' && flag !== '0';
}
