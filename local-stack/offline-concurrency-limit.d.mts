// Types of local-stack/offline-concurrency-limit.mjs (plain JavaScript: the `osls offline` child preloads it).

/** Reads FORGEBRIDGE_OFFLINE_CONCURRENCY: `{"ingest": 10, "*": 4}`; a `TypeError` names what is wrong. */
export function parseConcurrency(text: string): Record<string, number>;

/** Limits how many instances of each function serverless-offline's `Lambda` runs at once. */
export function limitConcurrency(
  LambdaClass: { prototype: { get(functionKey: string): unknown } },
  limits: Record<string, number>,
): void;
