import { createHash } from 'node:crypto';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import {
  BatchGetCommand,
  DeleteCommand,
  DynamoDBDocumentClient,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { AwsDefaults, DedupeTable } from '../constants.js';
import { dedupeKeyOf } from '../delivery-key.js';
import { isConditionalCheckFailed, QueueError } from '../errors.js';
import { ClaimCheck } from '../publish/index.js';
import { randomId } from '../random-id.js';
import { errorCode, positive } from '../rules.js';
import type { Delivery, PayloadRef } from '../types.js';
import { DedupeRecords, type DedupeState } from './dedupe-record.js';

/** Options of {@link DeliveryQueue}. Defaults live in {@link AwsDefaults}. */
export interface DeliveryQueueOptions {
  /** DynamoDB client of the dedupe table (the queue records live beside the dedupe records). */
  client: DynamoDBClient;
  /** The dedupe table, with the sparse `queue-due` index (`infra/tables.yml`). */
  tableName: string;
  /** How long a queue record (a dead one included) lives, in seconds. Default 604800 (7 days, as the dedupe record). */
  ttlSeconds?: number | undefined;
  /** Largest raw body kept inline in the record. Default 307200 (300 KB). */
  inlineMaxBytes?: number | undefined;
  /** S3 client for bodies over `inlineMaxBytes` (the claim-check bucket). */
  s3?: S3Client | undefined;
  /** Claim-check bucket for bodies over `inlineMaxBytes`. */
  bucket?: string | undefined;
  /** Claim-check key prefix. Default `'deliveries/'`. */
  claimCheckPrefix?: string | undefined;
}

/** A queue record, as the retrier leases it. */
export interface QueuedDelivery {
  /** The record's key: `queue#<delivery id>`. */
  pk: string;
  delivery: string;
  event: string;
  /** The forge preset, mapped action, source and the forge's own names, when the delivery had them. */
  forge?: string;
  action?: string;
  source?: string;
  hook?: string;
  nativeEvent?: string;
  nativeAction?: string;
  /** Epoch ms when the ingest queued it. */
  queuedAt: number;
  /** Failed retries so far. */
  attempts: number;
  /** The raw body, when it is inline. */
  body?: Uint8Array;
  /** Where the raw body is, when it was too large to keep inline. */
  payloadRef?: PayloadRef;
  /** The error code of the last failed publish. */
  lastError?: string;
  /** The lease token of the retrier holding it. */
  leaseOwner?: string;
  /**
   * The outputs still to write (`bus`, `stream`), when the ingest's publisher named them: a delivery the bus took
   * and the ordered stream did not holds `['stream']`. Without it, every output the retrier's publisher has.
   */
  outputs?: string[];
}

const DUE = 'due';

function keyOfRecord(record: QueuedDelivery): Pick<Delivery, 'id' | 'source'> {
  return record.source === undefined
    ? { id: record.delivery }
    : { id: record.delivery, source: record.source };
}
const ROUTE_FIELDS = ['forge', 'action', 'source', 'hook', 'nativeEvent', 'nativeAction'] as const;

/** The outputs a failed publish left to write (an `OutputsPublishError`'s `remaining`), when it names them. */
function remainingOutputs(failure: unknown): string[] | undefined {
  const remaining = (failure as { remaining?: unknown } | undefined)?.remaining;
  return Array.isArray(remaining) &&
    remaining.length > 0 &&
    remaining.every((name) => typeof name === 'string')
    ? [...remaining]
    : undefined;
}

/**
 * The durable queue of deliveries the bus did not take in time: one record per delivery in the dedupe table
 * (`pk` = `queue#<id>`), holding the raw body inline or a claim-check reference. Waiting records carry the
 * sparse index keys (`queue` = `due`, `dueAt`), so the retrier lists what is due with one Query and never scans.
 */
export class DeliveryQueue {
  readonly #documents: DynamoDBDocumentClient;
  readonly #tableName: string;
  readonly #ttlSeconds: number;
  readonly #inlineMaxBytes: number;
  readonly #s3: S3Client | undefined;
  readonly #claimCheck: ClaimCheck | undefined;
  readonly #records: DedupeRecords;

  constructor(options: DeliveryQueueOptions) {
    if (options?.client === undefined) throw new TypeError('"client" is required');
    if (!options.tableName) throw new TypeError('"tableName" is required');
    this.#documents = DynamoDBDocumentClient.from(options.client);
    this.#tableName = options.tableName;
    this.#ttlSeconds = positive('ttlSeconds', options.ttlSeconds ?? AwsDefaults.dedupeTtlSeconds);
    this.#inlineMaxBytes = positive(
      'inlineMaxBytes',
      options.inlineMaxBytes ?? AwsDefaults.queueInlineMaxBytes,
    );
    this.#s3 = options.s3;
    this.#claimCheck =
      options.s3 !== undefined && options.bucket
        ? new ClaimCheck({ s3: options.s3, bucket: options.bucket, prefix: options.claimCheckPrefix })
        : undefined;
    this.#records = new DedupeRecords({
      client: options.client,
      tableName: options.tableName,
      ttlSeconds: this.#ttlSeconds,
    });
  }

  /**
   * Keeps a delivery for the retrier, due at once. Resolves `'queued'`, or `'exists'` when a record for the id
   * is already there (a redelivery after the dedupe record was lost, or the SDK's retry of this very write).
   * Rejects with a {@link QueueError} when it could not be kept.
   */
  async enqueue(delivery: Delivery, failure?: unknown): Promise<'queued' | 'exists'> {
    const now = Date.now();
    const item: Record<string, unknown> = {
      [DedupeTable.partitionKey]: `${DedupeTable.queuePrefix}${dedupeKeyOf(delivery)}`,
      [DedupeTable.queueAttribute]: DUE,
      [DedupeTable.dueAttribute]: now,
      delivery: delivery.id,
      event: delivery.name,
      queuedAt: now,
      attempts: 0,
      [DedupeTable.ttlAttribute]: Math.floor(now / 1000) + this.#ttlSeconds,
    };
    // What the entry routes on besides the body: the retrier publishes the same detail-type and detail.
    for (const key of ROUTE_FIELDS) {
      if (delivery[key] !== undefined) item[key] = delivery[key];
    }
    if (failure !== undefined) item.lastError = errorCode(failure);
    const onBus = (failure as { onBus?: unknown } | undefined)?.onBus;
    if (typeof onBus === 'string') item.onBus = onBus;
    const outputs = remainingOutputs(failure);
    if (outputs !== undefined) item.outputs = outputs;
    if (delivery.rawBody.byteLength <= this.#inlineMaxBytes) {
      item.body = delivery.rawBody;
    } else {
      if (this.#claimCheck === undefined) {
        throw new QueueError(
          `body of ${delivery.rawBody.byteLength} bytes exceeds "inlineMaxBytes" and no claim-check "bucket" is configured`,
        );
      }
      try {
        // The same key as the publisher's own claim check of this delivery today: it is overwritten, not doubled.
        item.payloadRef = await this.#claimCheck.store(delivery);
      } catch (error) {
        throw new QueueError('claim-check object could not be stored in "bucket"', { cause: error });
      }
    }
    try {
      await this.#documents.send(
        new PutCommand({
          TableName: this.#tableName,
          Item: item,
          ConditionExpression: 'attribute_not_exists(#pk)',
          ExpressionAttributeNames: { '#pk': DedupeTable.partitionKey },
        }),
      );
    } catch (error) {
      if (isConditionalCheckFailed(error)) return 'exists';
      throw new QueueError('delivery could not be queued', { cause: error });
    }
    return 'queued';
  }

  /** The keys of up to `limit` records due now, oldest due first (one Query on the sparse index). */
  async due(limit: number): Promise<string[]> {
    const { Items } = await this.#documents.send(
      new QueryCommand({
        TableName: this.#tableName,
        IndexName: DedupeTable.queueIndex,
        KeyConditionExpression: '#queue = :due AND #dueAt <= :now',
        ExpressionAttributeNames: {
          '#queue': DedupeTable.queueAttribute,
          '#dueAt': DedupeTable.dueAttribute,
        },
        ExpressionAttributeValues: { ':due': DUE, ':now': Date.now() },
        Limit: limit,
      }),
    );
    return (Items ?? []).map((item) => String(item[DedupeTable.partitionKey]));
  }

  /**
   * What waits in the queue now, due or not (dead-lettered records left it): how many records, and the age of
   * the oldest one in seconds (0 when empty). Pages through the index's keys, then reads `queuedAt` of the first
   * `sampleSize` (default 1000) records by due time: an empty queue costs one Query. Rejects when they cannot be
   * read, the SDK's error as it came, or a {@link QueueError} when BatchGetItem kept leaving keys unprocessed.
   */
  async stats(sampleSize = 1_000): Promise<{ depth: number; oldestAgeSeconds: number }> {
    const keys: string[] = [];
    let depth = 0;
    let start: Record<string, unknown> | undefined;
    do {
      const page = await this.#documents.send(
        new QueryCommand({
          TableName: this.#tableName,
          IndexName: DedupeTable.queueIndex,
          KeyConditionExpression: '#queue = :due',
          ExpressionAttributeNames: { '#queue': DedupeTable.queueAttribute },
          ExpressionAttributeValues: { ':due': DUE },
          ExclusiveStartKey: start,
        }),
      );
      depth += page.Count ?? page.Items?.length ?? 0;
      for (const item of page.Items ?? []) {
        if (keys.length < sampleSize) keys.push(String(item[DedupeTable.partitionKey]));
      }
      start = page.LastEvaluatedKey;
    } while (start !== undefined);
    let oldest = Number.POSITIVE_INFINITY;
    for (let at = 0; at < keys.length; at += 100) {
      let request: Record<string, { Keys: Record<string, unknown>[]; ProjectionExpression: string }> = {
        [this.#tableName]: {
          Keys: keys.slice(at, at + 100).map((pk) => ({ [DedupeTable.partitionKey]: pk })),
          ProjectionExpression: 'queuedAt',
        },
      };
      // BatchGet may leave keys unprocessed under throttling: ask again for those (a few times at most).
      for (let round = 0; round < 5 && Object.keys(request).length > 0; round++) {
        const { Responses, UnprocessedKeys } = await this.#documents.send(
          new BatchGetCommand({ RequestItems: request }),
        );
        for (const item of Responses?.[this.#tableName] ?? []) {
          if (typeof item.queuedAt === 'number') oldest = Math.min(oldest, item.queuedAt);
        }
        request = (UnprocessedKeys ?? {}) as typeof request;
      }
      // An age read from part of the records may be younger than the oldest one: no figure rather than a wrong one.
      if (Object.keys(request).length > 0) {
        throw new QueueError('queue stats incomplete: keys still unprocessed after 5 BatchGetItem rounds');
      }
    }
    const oldestAgeSeconds = Number.isFinite(oldest)
      ? Math.max(0, Math.floor((Date.now() - oldest) / 1000))
      : 0;
    return { depth, oldestAgeSeconds };
  }

  /**
   * Takes a due record for `leaseMs`, by moving its due time past the lease with a conditional write: another
   * retrier neither lists it nor wins the same write. Resolves `undefined` when it is no longer due (taken).
   */
  async lease(pk: string, leaseMs: number): Promise<QueuedDelivery | undefined> {
    const now = Date.now();
    try {
      const { Attributes } = await this.#documents.send(
        new UpdateCommand({
          TableName: this.#tableName,
          Key: { [DedupeTable.partitionKey]: pk },
          UpdateExpression: 'SET #dueAt = :until, leaseOwner = :owner',
          ConditionExpression: '#queue = :due AND #dueAt <= :now',
          ExpressionAttributeNames: {
            '#queue': DedupeTable.queueAttribute,
            '#dueAt': DedupeTable.dueAttribute,
          },
          ExpressionAttributeValues: {
            ':until': now + leaseMs,
            ':owner': randomId(12),
            ':due': DUE,
            ':now': now,
          },
          ReturnValues: 'ALL_NEW',
        }),
      );
      return Attributes as QueuedDelivery | undefined;
    } catch (error) {
      if (isConditionalCheckFailed(error)) return undefined;
      throw error;
    }
  }

  /** The delivery a leased record holds: its inline body, or the claim-check object checked against its digest. */
  async load(record: QueuedDelivery): Promise<Delivery> {
    let rawBody: Uint8Array;
    if (record.body !== undefined) {
      rawBody = record.body;
    } else if (record.payloadRef !== undefined && this.#s3 !== undefined) {
      const ref = record.payloadRef;
      try {
        const object = await this.#s3.send(new GetObjectCommand({ Bucket: ref.bucket, Key: ref.key }));
        if (object.Body === undefined) throw new Error('empty body');
        rawBody = await object.Body.transformToByteArray();
      } catch (error) {
        throw new QueueError(`claim-check object "${ref.key}" could not be read`, { cause: error });
      }
      const sha256 = createHash('sha256').update(rawBody).digest('hex');
      if (rawBody.byteLength !== ref.bytes || sha256 !== ref.sha256) {
        throw new QueueError(
          `claim-check object "${ref.key}" does not match the queue record (bytes or sha256)`,
        );
      }
    } else {
      throw new QueueError('queue record has neither "body" nor a readable "payloadRef"');
    }
    let payload: unknown;
    try {
      payload = JSON.parse(Buffer.from(rawBody).toString('utf8'));
    } catch (error) {
      throw new QueueError('queued body is not json', { cause: error });
    }
    const delivery: Delivery = { id: record.delivery, name: record.event, payload, rawBody };
    for (const key of ROUTE_FIELDS) {
      const value = record[key];
      if (typeof value === 'string') delivery[key] = value;
    }
    return delivery;
  }

  /**
   * What the delivery's dedupe record says now (one consistent read): `published` when a later attempt (the
   * forge's redelivery after a queue write whose reply was lost) put it on the bus, so the record must not be.
   */
  async deliveryState(record: QueuedDelivery): Promise<DedupeState> {
    return this.#records.state(keyOfRecord(record));
  }

  /**
   * Writes the delivery's completed dedupe record once the retrier published it, when there is none (the ingest
   * answered 503 and released it): a redelivery after that is a duplicate. `false` when a record was there.
   */
  async markPublished(record: QueuedDelivery): Promise<boolean> {
    return this.#records.markPublished(keyOfRecord(record));
  }

  /** Deletes a record once its delivery is on the bus. */
  async remove(record: QueuedDelivery): Promise<void> {
    await this.#documents.send(
      new DeleteCommand({ TableName: this.#tableName, Key: { [DedupeTable.partitionKey]: record.pk } }),
    );
  }

  /** Gives a leased record back, due again in `delayMs`, with one more failed attempt and its error code. */
  async retryLater(record: QueuedDelivery, failure: unknown, delayMs: number): Promise<void> {
    // A retry that wrote some outputs (the bus) before one failed (the stream) leaves the rest only.
    const outputs = remainingOutputs(failure);
    await this.#documents.send(
      new UpdateCommand({
        TableName: this.#tableName,
        Key: { [DedupeTable.partitionKey]: record.pk },
        UpdateExpression: `SET #dueAt = :next, attempts = attempts + :one, lastError = :error${outputs === undefined ? '' : ', outputs = :outputs'} REMOVE leaseOwner`,
        ConditionExpression: 'leaseOwner = :owner',
        ExpressionAttributeNames: { '#dueAt': DedupeTable.dueAttribute },
        ExpressionAttributeValues: {
          ':next': Date.now() + delayMs,
          ':one': 1,
          ':error': errorCode(failure),
          ':owner': record.leaseOwner,
          ...(outputs === undefined ? {} : { ':outputs': outputs }),
        },
      }),
    );
  }

  /**
   * Dead-letters a leased record: it leaves the index (never tried again) and keeps `dead: true`, the reason
   * and the body until its TTL.
   */
  async bury(record: QueuedDelivery, failure: unknown): Promise<void> {
    await this.#documents.send(
      new UpdateCommand({
        TableName: this.#tableName,
        Key: { [DedupeTable.partitionKey]: record.pk },
        UpdateExpression:
          'SET dead = :true, deadAt = :now, deadReason = :error, lastError = :error, attempts = attempts + :one REMOVE #queue, #dueAt, leaseOwner',
        ConditionExpression: 'leaseOwner = :owner',
        ExpressionAttributeNames: {
          '#queue': DedupeTable.queueAttribute,
          '#dueAt': DedupeTable.dueAttribute,
        },
        ExpressionAttributeValues: {
          ':true': true,
          ':now': Date.now(),
          ':error': errorCode(failure),
          ':one': 1,
          ':owner': record.leaseOwner,
        },
      }),
    );
  }
}
