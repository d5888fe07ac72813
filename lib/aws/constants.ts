/**
 * Defaults and fixed figures of the AWS-facing pieces. Every default is written once, here.
 */
export const AwsDefaults = {
  /** EventBridge `Source` of every published delivery. */
  source: 'forge.webhooks',
  /**
   * Largest PutEvents entry we send before the claim check kicks in: 960 KiB. EventBridge takes entries up to
   * 1 MB since January 2026 (256 KB before); the margin keeps the event a rule hands on (the entry plus its
   * envelope: id, account, time, region...) within the 1 MB a Lambda target takes, whether "1 MB" means 10^6
   * bytes or 2^20. Set `FORGEBRIDGE_MAX_ENTRY_BYTES=262144` where a bus or a target still stops at 256 KB.
   */
  maxEntryBytes: 960 * 1024,
  /** Total time budget for publishing one delivery, retries included: 3 s (the forge waits about 10 s). */
  publishBudgetMs: 3_000,
  /** First retry delay; each retry doubles it, with full jitter. */
  publishBaseDelayMs: 50,
  /** Upper bound of a single retry delay. */
  publishMaxDelayMs: 1_000,
  /** Lifetime of a dedupe record: 7 days. */
  dedupeTtlSeconds: 7 * 24 * 60 * 60,
  /** Lifetime of an in-progress lock when the Lambda context gives no remaining time (30 s, the ingest timeout). */
  dedupeLockSeconds: 30,
  /** Prefix of the dedupe key (`delivery#<base64 MD5 of the id>`): fixed, so a renamed function still sees its records. */
  dedupeKeyPrefix: 'delivery',
  /** A token within this many seconds of expiry is refreshed: 5 minutes. */
  refreshWindowSeconds: 300,
  /** Lifetime of a refresh lease: long enough for one token request (HTTP timeout 10 s) plus the write. */
  leaseSeconds: 15,
  /** How long a reader that lost the lease waits for the winner's token. */
  leaseWaitMs: 5_000,
  /** Poll interval of a reader waiting for the winner's token. */
  leasePollMs: 100,
  /** Cache age of the webhook secrets fetched from SSM: 5 minutes. */
  secretsMaxAgeSeconds: 300,
  /** Environment variable holding the secrets when running offline. */
  secretsEnvVar: 'FORGEBRIDGE_WEBHOOK_SECRET',
  /** Environment variable holding an OAuth client's secret when running offline (a client's `secretEnv` overrides it). */
  oauthClientSecretEnvVar: 'FORGEBRIDGE_OAUTH_CLIENT_SECRET',
  /** Environment variable holding a GitHub App's private key when running offline (an entry's `privateKeyEnv` overrides it). */
  githubAppPrivateKeyEnvVar: 'FORGEBRIDGE_GITHUB_APP_PRIVATE_KEY',
  /** REST API base URL of a GitHub App entry without `apiUrl`. */
  githubApiUrl: 'https://api.github.com',
  /** A GitHub App JWT's `exp`, from now: 9 minutes, so `exp` stays within GitHub's 10 minutes of the backdated `iat`. */
  githubAppJwtSeconds: 9 * 60,
  /** How far a GitHub App JWT's `iat` is backdated, for a server clock behind ours: 60 s, as GitHub advises. */
  githubAppJwtBackdateSeconds: 60,
  /** Largest installation-token answer read: 4 MiB (a token narrowed to 500 repositories lists them all). */
  githubTokenMaxResponseBytes: 4 * 1024 * 1024,
  /** Key prefix of claim-check objects in S3. */
  claimCheckPrefix: 'deliveries/',
  /** Longest delivery id accepted (`isDeliveryId`): DynamoDB and S3 keys stay well within their limits. */
  maxDeliveryIdLength: 256,
  /** Largest raw body a queue record holds inline; a larger one goes to the claim-check bucket (items stop at 400 KB). */
  queueInlineMaxBytes: 300 * 1024,
  /** How long the retrier keeps trying a queued delivery before it is dead-lettered: 24 hours. */
  queueMaxAgeSeconds: 24 * 60 * 60,
  /** How long one retrier holds a queued delivery it is publishing (longer than a publish budget). */
  queueLeaseSeconds: 60,
  /** First wait after a failed retry; doubled per attempt. */
  queueRetryBaseSeconds: 30,
  /** Longest wait between two retries of a queued delivery: 15 minutes. */
  queueRetryMaxSeconds: 15 * 60,
  /** Most queued deliveries one retrier run takes. */
  queueBatchSize: 100,
  /** Queued deliveries one retrier run publishes at once. */
  queueConcurrency: 4,
  /** CloudWatch namespace of the retrier's metrics (embedded metric format). */
  metricNamespace: 'forgebridge',
  /** Lifetime of a delivery log record: 14 days. */
  deliveryLogTtlSeconds: 14 * 24 * 60 * 60,
  /**
   * Write shards of one day in the delivery log's list index: each shard is its own index partition (about
   * 1,000 writes per second each), so a day takes 4,000 deliveries per second before its index throttles.
   */
  deliveryLogIndexShards: 4,
  /** Largest raw body a delivery log record keeps inline when payloads are stored (items stop at 400 KB). */
  deliveryLogPayloadMaxBytes: 300 * 1024,
  /** Records a delivery log `list` returns when no `limit` is given. */
  deliveryLogListLimit: 50,
} as const;

/**
 * Bytes EventBridge adds to every entry for its `Time` field.
 *
 * @see https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-putevent-size.html
 */
export const ENTRY_TIME_BYTES = 14;

/** Attribute names of the dedupe table. `infra/tables.ts` and serverless.yml declare the same. */
export const DedupeTable = {
  /** Partition key (S): `delivery#` and the base64 MD5 of the delivery id (Powertools Idempotency's key). */
  partitionKey: 'pk',
  /** TTL attribute (N, epoch seconds): the record disappears 7 days after the delivery. */
  ttlAttribute: 'expiresAt',
  /** Hash of the owner token of the attempt that wrote the in-progress record (S). */
  ownerAttribute: 'owner',
  /** Key prefix of a queue record (`queue#<delivery id>`): a delivery the bus did not take, kept for the retrier. */
  queuePrefix: 'queue#',
  /** Sparse index listing the queue records that wait for the retrier, by due time. */
  queueIndex: 'queue-due',
  /** Partition key of {@link DedupeTable.queueIndex} (S, always `due`); only waiting queue records carry it. */
  queueAttribute: 'queue',
  /** Sort key of {@link DedupeTable.queueIndex} (N, epoch ms): when the record may be tried (again). */
  dueAttribute: 'dueAt',
} as const;

/** Attribute names of the delivery log table. `infra/tables.ts` and `infra/tables.yml` declare the same. */
export const DeliveryLogTable = {
  /** Partition key (S): `delivery#<dedupe key>` for a delivery, `request#<record id>` for one without a usable id. */
  partitionKey: 'pk',
  /** Sort key (S): `record#<at>` for each request answered, `subscribers` for the subscribers' outcomes. */
  sortKey: 'sk',
  /** TTL attribute (N, epoch seconds). */
  ttlAttribute: 'expiresAt',
  /** Index listing the records newest first, one partition per day and write shard. */
  listIndex: 'by-day',
  /** Partition key of {@link DeliveryLogTable.listIndex} (S): `<YYYY-MM-DD>#<shard>`, the UTC day received. */
  dayAttribute: 'day',
  /** Sort key of {@link DeliveryLogTable.listIndex} (S): `<ISO receivedAt>#<record id>`, unique and time-ordered. */
  atAttribute: 'at',
  /** The summary attributes the list index holds besides the keys (never headers nor the body). */
  listAttributes: [
    'recordId',
    'deliveryId',
    'receivedAt',
    'event',
    'action',
    'forge',
    'source',
    'verdict',
    'reason',
    'httpStatus',
    'outcome',
    'errorCode',
    'bodyBytes',
    'eventId',
    'payloadRef',
    'expiresAt',
  ],
} as const;

/** The dimensions of the custom metrics ({@link MetricDefinitions}), by name. */
export const MetricDimensions = {
  /** `POWERTOOLS_SERVICE_NAME` (`forgebridge`): Powertools Metrics adds it to every metric it prints. */
  service: 'service',
  /** The configured webhook source; `_unknown` for a request to one that is not configured. */
  source: 'Source',
  /** What the signature check said (`verified`, `bad_signature`, ...), as in the delivery log. */
  verdict: 'Verdict',
  /** What the ingest did (`published`, ...) or how a subscriber ended (`ok`, `error`). */
  outcome: 'Outcome',
  /** A subscriber's Lambda function name. */
  function: 'Function',
} as const;

const { source, verdict, outcome, function: fn } = MetricDimensions;

/**
 * Every custom metric the functions print (CloudWatch embedded metric format): its name, unit and the one dimension
 * set it is printed under, besides `service` when `service` is true (the two printed on a log line of their own
 * carry no dimension at all). The one home of these names: the alarms and the dashboard (infra/monitoring.cjs) are
 * built from it, and tests hold the printed metrics, every alarm and docs/operations.md's table to it.
 */
export const MetricDefinitions = {
  /** 1 per request answered. */
  deliveries: { name: 'Deliveries', unit: 'Count', dimensions: [source, verdict, outcome], service: true },
  ingestDuration: { name: 'IngestDuration', unit: 'Milliseconds', dimensions: [], service: true },
  bodyBytes: { name: 'BodyBytes', unit: 'Bytes', dimensions: [], service: true },
  queueDepth: { name: 'QueueDepth', unit: 'Count', dimensions: [], service: true },
  queueOldestAgeSeconds: { name: 'QueueOldestAgeSeconds', unit: 'Seconds', dimensions: [], service: true },
  /** 1 on a retrier run that could not read the queue's depth and age: a blind queue is itself an alarm. */
  queueStatsFailed: { name: 'QueueStatsFailed', unit: 'Count', dimensions: [], service: true },
  redrivePublished: { name: 'RedrivePublished', unit: 'Count', dimensions: [], service: true },
  /** 1 on each dead-letter log line of the retrier (an alarm fires on one). */
  deadLetteredDeliveries: { name: 'DeadLetteredDeliveries', unit: 'Count', dimensions: [], service: false },
  subscriberOutcome: { name: 'SubscriberOutcome', unit: 'Count', dimensions: [fn, outcome], service: true },
  subscriberDuration: {
    name: 'SubscriberDuration',
    unit: 'Milliseconds',
    dimensions: [fn, outcome],
    service: true,
  },
  reconcileFailedAtForge: {
    name: 'ReconcileFailedAtForge',
    unit: 'Count',
    dimensions: [source],
    service: true,
  },
  reconcileRedelivered: { name: 'ReconcileRedelivered', unit: 'Count', dimensions: [source], service: true },
  reconcileRecovered: { name: 'ReconcileRecovered', unit: 'Count', dimensions: [source], service: true },
  /** 1 per forge API call that waited for its turn (the governor); `ForgeApiWaitTime` how long. */
  forgeApiWaits: { name: 'ForgeApiWaits', unit: 'Count', dimensions: [], service: true },
  forgeApiWaitTime: { name: 'ForgeApiWaitTime', unit: 'Milliseconds', dimensions: [], service: true },
  /** 1 per forge API call that could not get its turn in time (a `ForgeRateLimitError`). */
  forgeApiRefused: { name: 'ForgeApiRefused', unit: 'Count', dimensions: [], service: true },
  /** 1 per rate-limit answer (403/429) of the forge (an alarm fires on one). */
  forgeApiLimitAnswers: { name: 'ForgeApiLimitAnswers', unit: 'Count', dimensions: [], service: true },
  /** 1 per forge API call that went on unthrottled: the governor's store could not be reached. */
  forgeApiGovernorUnavailable: {
    name: 'ForgeApiGovernorUnavailable',
    unit: 'Count',
    dimensions: [],
    service: true,
  },
  /** 1 per malformed rate-limit header of a forge answer (ignored). */
  forgeApiMalformedHeaders: {
    name: 'ForgeApiMalformedHeaders',
    unit: 'Count',
    dimensions: [],
    service: true,
  },
  /** 1 on each log line of the reconciler about a delivery given up (an alarm fires on one). */
  reconcileGaveUpDeliveries: {
    name: 'ReconcileGaveUpDeliveries',
    unit: 'Count',
    dimensions: [],
    service: false,
  },
} as const satisfies Record<string, MetricDefinition>;

/** One custom metric of {@link MetricDefinitions}. */
export interface MetricDefinition {
  readonly name: string;
  readonly unit: 'Count' | 'Milliseconds' | 'Bytes' | 'Seconds';
  /** Its dimensions besides `service`, in the order they are printed. */
  readonly dimensions: readonly (typeof MetricDimensions)[keyof typeof MetricDimensions][];
  /** Printed through Powertools Metrics, which adds the `service` dimension. */
  readonly service: boolean;
}

/** The name of each metric of {@link MetricDefinitions}. */
export const MetricNames = Object.fromEntries(
  Object.entries(MetricDefinitions).map(([key, definition]) => [key, definition.name]),
) as { readonly [K in keyof typeof MetricDefinitions]: (typeof MetricDefinitions)[K]['name'] };

/**
 * The `Outcome`s of `Deliveries` for a verified delivery (everything the ingest does with one but refuse it): the
 * quiet-source alarm adds them up.
 */
export const VERIFIED_DELIVERY_OUTCOMES = [
  'published',
  'queued',
  'duplicate',
  'in_progress',
  'failed',
] as const;

/**
 * Attribute names of the token table. `infra/tables.ts` and serverless.yml declare the same.
 */
export const TokenTable = {
  /** Partition key (S): `provider#clientId#scope`. */
  partitionKey: 'pk',
} as const;

/**
 * Stable error codes of lib/aws: carried by its errors (`error.code`) and by the ingest's JSON error bodies.
 * Compare against these, never against messages.
 */
export const AwsErrorCodes = {
  /** A delivery over the entry limit could not be stored in the claim-check bucket. */
  claimCheckFailed: 'claim_check_failed',
  /** The entry is too large even with a claim check. */
  entryTooLarge: 'entry_too_large',
  /** EventBridge refused the entry for good (validation, access). */
  publishRejected: 'publish_rejected',
  /** EventBridge did not accept the entry within the publish budget. */
  publishFailed: 'publish_failed',
  /** An EventBridge event is not one the ingest published. */
  invalidEvent: 'invalid_event',
  /** A delivery's payload is not a JSON object. */
  invalidPayload: 'invalid_payload',
  /** The claim-checked payload does not match its recorded sha256. */
  payloadIntegrity: 'payload_integrity',
  /** The claim-checked payload could not be read. */
  payloadUnavailable: 'payload_unavailable',
  /** A stored token item cannot be read back as an `AccessToken`. */
  invalidItem: 'invalid_item',
  /** Two writers updated one token item at once. */
  tokenStoreConflict: 'token_store_conflict',
  /** The authorization server did not give a new token. */
  refreshFailed: 'refresh_failed',
  /** A GitHub App's private key is unusable, or GitHub refused the app JWT or the installation token request. */
  githubAppFailed: 'github_app_failed',
  /** No new token appeared while waiting for another refresher. */
  refreshTimeout: 'refresh_timeout',
  /** No secret is configured. */
  secretsMissing: 'secrets_missing',
  /** The secret store could not be read. */
  secretsUnavailable: 'secrets_unavailable',
  /** A delivery the bus did not take could not be kept in the queue either. */
  queueFailed: 'queue_failed',
  /** The ingest could not take the delivery (secrets or DynamoDB failed, or neither the bus nor the queue took it): 503. */
  serviceUnavailable: 'service_unavailable',
  /** The delivery id is not one `isDeliveryId` takes: 400. */
  invalidDeliveryId: 'invalid_delivery_id',
  /** The same delivery is being processed by another invocation: 409. */
  inProgress: 'in_progress',
  /** No webhook source of that name is configured (`/webhooks/{source}`): 404. */
  unknownSource: 'unknown_source',
  /** Another middleware refused the request with a 4xx this module has no code for. */
  badRequest: 'bad_request',
  /** A forge API call could not get its turn within its wait (a limit of the governor's, or the forge's own). */
  forgeRateLimited: 'forge_rate_limited',
  /** A subscriber's handler was still running just before its function's timeout: reported, then failed. */
  subscriberTimeout: 'subscriber_timeout',
} as const;
/** A lib/aws error code. */
export type AwsErrorCode = (typeof AwsErrorCodes)[keyof typeof AwsErrorCodes];
