import { createHash } from 'node:crypto';
import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { EventBridgeEvent } from 'aws-lambda';
import { type Forge, Forges } from '../../webhooks/index.js';
import { AwsErrorCodes } from '../constants.js';
import { ResolveDeliveryError } from '../errors.js';
import type { DeliveryDetail, PayloadRef } from '../types.js';

/** A delivery rebuilt from an EventBridge event, in the shape `receive()` of `lib/webhooks` takes. */
export interface ResolvedDelivery {
  id: string;
  name: string;
  payload: unknown;
  /**
   * The mapped action (`detail.action`), present when the delivery was read with a forge preset: it then
   * chooses the `name.action` handlers instead of `payload.action` (a GitLab payload has none at the top).
   */
  action?: string | undefined;
  /** `detail.forge`: the forge preset the ingest read the delivery with. */
  forge?: Forge;
  /** `detail.source`: the webhook source it came in through. */
  source?: string;
  /**
   * `detail.hook`: the hook that sent it, where the forge names one. GitHub gives two Apps' deliveries of one event
   * one id: dedupe on the id and the hook together.
   */
  hook?: string;
  /** `detail.nativeEvent`: the forge's own event name. */
  nativeName?: string;
  /** `detail.nativeAction`: the forge's own action. */
  nativeAction?: string | undefined;
  /**
   * Set when `forgebridge replay --since` put the delivery on the bus again under its original id (`detail.replay`,
   * when well-formed): the run, when it was sent, the subscribers that had reported `ok` for it by then, and whether
   * the subscriber resolving it (`subscriber` of the dependencies) is one of them.
   */
  replay?: DeliveryReplay;
}

/** {@link ResolvedDelivery.replay}: a delivery sent again to the whole bus. */
export interface DeliveryReplay {
  /** The replay run's id. */
  run: string;
  /** When the run sent it (ISO 8601). */
  at: string;
  /** The subscribers (their names in the delivery log) that had reported `ok` for the delivery by then. */
  ok: readonly string[];
  /** `true` when the resolving subscriber is in {@link ok}: it has already taken this delivery. */
  alreadyOk: boolean;
}

/** Collaborators of {@link resolveDelivery}. */
export interface ResolveDeliveryDependencies {
  /** S3 client, needed only for claim-checked events (those with `detail.payloadRef`). */
  s3?: S3Client | undefined;
  /**
   * The resolving subscriber's name in the delivery log (its function's name by default): a replayed delivery's
   * `replay.alreadyOk` says whether it is one of those that had taken it.
   */
  subscriber?: string | undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isPayloadRef(value: unknown): value is PayloadRef {
  return (
    isRecord(value) &&
    typeof value.bucket === 'string' &&
    typeof value.key === 'string' &&
    typeof value.bytes === 'number' &&
    typeof value.sha256 === 'string'
  );
}

/**
 * Rebuilds `{ id, name, payload }` from an event the ingest published. A claim-checked event's payload is
 * fetched from S3 and checked against the reference's size and SHA-256 before it is parsed.
 */
export async function resolveDelivery(
  event: Pick<EventBridgeEvent<string, unknown>, 'detail'>,
  deps: ResolveDeliveryDependencies = {},
): Promise<ResolvedDelivery> {
  let detail = (event as { detail?: unknown } | undefined)?.detail;
  if (typeof detail === 'string') {
    // Some relays (an SQS target with an input transformer, a replayed archive dump) hand over the JSON text.
    try {
      detail = JSON.parse(detail);
    } catch {
      detail = undefined;
    }
  }
  if (!isRecord(detail) || typeof detail.delivery !== 'string' || typeof detail.event !== 'string') {
    throw new ResolveDeliveryError(
      AwsErrorCodes.invalidEvent,
      'event has no "detail.delivery" and "detail.event"',
    );
  }
  const shaped = detail as unknown as DeliveryDetail;
  if (detail.payloadRef === undefined) {
    return withRoute(
      { id: shaped.delivery, name: shaped.event, payload: shaped.payload },
      detail,
      deps.subscriber,
    );
  }
  const ref = detail.payloadRef;
  if (!isPayloadRef(ref)) {
    throw new ResolveDeliveryError(AwsErrorCodes.invalidEvent, 'event has a malformed "detail.payloadRef"');
  }
  if (deps.s3 === undefined) {
    throw new ResolveDeliveryError(
      AwsErrorCodes.payloadUnavailable,
      'an "s3" client is needed to resolve "detail.payloadRef"',
    );
  }
  let bytes: Uint8Array;
  try {
    const object = await deps.s3.send(new GetObjectCommand({ Bucket: ref.bucket, Key: ref.key }));
    if (object.Body === undefined) throw new Error('empty body');
    bytes = await object.Body.transformToByteArray();
  } catch (error) {
    throw new ResolveDeliveryError(
      AwsErrorCodes.payloadUnavailable,
      `claim-check object "${ref.key}" could not be read`,
      {
        cause: error,
      },
    );
  }
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  if (bytes.byteLength !== ref.bytes || sha256 !== ref.sha256) {
    throw new ResolveDeliveryError(
      AwsErrorCodes.payloadIntegrity,
      `claim-check object "${ref.key}" does not match "detail.payloadRef" (bytes or sha256)`,
    );
  }
  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch (error) {
    throw new ResolveDeliveryError(
      AwsErrorCodes.invalidPayload,
      `claim-check object "${ref.key}" is not json`,
      {
        cause: error,
      },
    );
  }
  return withRoute({ id: shaped.delivery, name: shaped.event, payload }, detail, deps.subscriber);
}

/** Adds the forge fields of `detail` that are well-formed; an event without `forge` keeps `payload.action`. */
function withRoute(
  delivery: ResolvedDelivery,
  detail: Record<string, unknown>,
  subscriber: string | undefined,
): ResolvedDelivery {
  const text = (key: string) => (typeof detail[key] === 'string' ? (detail[key] as string) : undefined);
  const forge = text('forge');
  if (forge !== undefined && (Forges as readonly string[]).includes(forge)) {
    delivery.forge = forge as Forge;
    delivery.action = text('action');
    const nativeName = text('nativeEvent');
    if (nativeName !== undefined) delivery.nativeName = nativeName;
    const nativeAction = text('nativeAction');
    if (nativeAction !== undefined) delivery.nativeAction = nativeAction;
  }
  const source = text('source');
  if (source !== undefined) delivery.source = source;
  const hook = text('hook');
  if (hook !== undefined) delivery.hook = hook;
  const replay = replayOf(detail.replay, subscriber);
  if (replay !== undefined) delivery.replay = replay;
  return delivery;
}

/** `detail.replay` when it is well-formed (a run, a time, the names that took it); anything else is no replay. */
function replayOf(value: unknown, subscriber: string | undefined): DeliveryReplay | undefined {
  if (!isRecord(value)) return undefined;
  const { run, at, ok } = value;
  if (typeof run !== 'string' || run === '' || typeof at !== 'string' || !Array.isArray(ok)) return undefined;
  const names = ok.filter((name): name is string => typeof name === 'string' && name !== '');
  return {
    run,
    at,
    ok: names,
    alreadyOk: subscriber !== undefined && subscriber !== '' && names.includes(subscriber),
  };
}
