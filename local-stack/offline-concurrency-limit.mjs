// The concurrency limit of local-stack/offline-concurrency.mjs, on serverless-offline's `Lambda` class: its
// `get(functionKey)` hands out an instance of the function, and the caller sets the event and runs the handler.
// A limited function's `get` hands out a stand-in instead, which takes an instance only once a slot is free.

/** The methods serverless-offline's callers use on what `Lambda#get` returns (HTTP, schedule, invoke, EventBridge). */
const DEFERRED = ['setEvent', 'setClientContext'];

/**
 * Reads FORGEBRIDGE_OFFLINE_CONCURRENCY: `{"ingest": 10, "*": 4}`.
 * @param {string} text
 * @returns {Record<string, number>}
 */
export function parseConcurrency(text) {
  let limits;
  try {
    limits = JSON.parse(text);
  } catch {
    throw new TypeError('FORGEBRIDGE_OFFLINE_CONCURRENCY must be a JSON object');
  }
  if (limits === null || typeof limits !== 'object' || Array.isArray(limits)) {
    throw new TypeError('FORGEBRIDGE_OFFLINE_CONCURRENCY must be a JSON object');
  }
  for (const [key, value] of Object.entries(limits)) {
    if (!Number.isInteger(value) || value < 1) {
      throw new TypeError(`FORGEBRIDGE_OFFLINE_CONCURRENCY "${key}" must be a positive integer`);
    }
  }
  return limits;
}

/**
 * Limits how many instances of each function run at once.
 * @param {{ prototype: { get(functionKey: string): unknown } }} LambdaClass serverless-offline's `Lambda`
 * @param {Record<string, number>} limits per function key, `*` for the rest
 */
export function limitConcurrency(LambdaClass, limits) {
  const get = LambdaClass.prototype.get;
  if (typeof get !== 'function') {
    throw new TypeError(
      'serverless-offline changed: Lambda#get is not a function; see local-stack/offline-concurrency.mjs',
    );
  }
  /** @type {Map<string, { running: number, waiting: Array<() => void> }>} */
  const slots = new Map();
  const slotsOf = (key) => {
    let found = slots.get(key);
    if (found === undefined) {
      found = { running: 0, waiting: [] };
      slots.set(key, found);
    }
    return found;
  };
  LambdaClass.prototype.get = function getWithinLimit(functionKey) {
    const limit = limits[functionKey] ?? limits['*'];
    if (limit === undefined) return get.call(this, functionKey);
    const lambda = this;
    const slot = slotsOf(functionKey);
    /** @type {Array<[string, unknown]>} */
    const calls = [];
    const standIn = {
      async runHandler() {
        // A finishing invocation hands its slot to the first waiting one: `running` stays as it is.
        if (slot.running >= limit) await new Promise((resolve) => slot.waiting.push(resolve));
        else slot.running += 1;
        try {
          // An instance now: the idle one serverless-offline keeps, or a new one when every one is busy.
          const instance = get.call(lambda, functionKey);
          for (const [method, argument] of calls) instance[method](argument);
          return await instance.runHandler();
        } finally {
          const next = slot.waiting.shift();
          if (next === undefined) slot.running -= 1;
          else next();
        }
      },
    };
    for (const method of DEFERRED) {
      standIn[method] = (argument) => {
        calls.push([method, argument]);
      };
    }
    return standIn;
  };
}
