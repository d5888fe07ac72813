/**
 * A generic subscriber: it rebuilds `{ id, name, payload }` from the EventBridge event (resolving an S3 claim
 * check) and logs one `delivery received` line. serverless.yml subscribes it under several rule forms (every
 * `issues` action, `push`, everything): copy it as the start of a subscriber of your own, and register your
 * handlers with `register: (events) => events.on('push', ({ payload }) => …)`.
 *
 * A test aid of the local stack only: with `FORGEBRIDGE_EXAMPLE_FAIL_FILE` set (the local stack sets it) and that
 * file holding `{ "fail": ["onEverything"] }`, each function named there fails every delivery it gets, as a bad
 * deploy would, until the file no longer names it. A deployed stage never sets the variable.
 */
import { readFileSync } from 'node:fs';
import { createSubscriberHandler } from '../../lib/aws/index.js';

const failFile = process.env.FORGEBRIDGE_EXAMPLE_FAIL_FILE;
const functionName = process.env.AWS_LAMBDA_FUNCTION_NAME ?? '';

/** Whether the failure switch names this function now (read at each delivery, so it turns on and off live). */
function switchedToFail(file: string): boolean {
  let named: unknown;
  try {
    named = (JSON.parse(readFileSync(file, 'utf8')) as { fail?: unknown }).fail;
  } catch {
    return false;
  }
  return (
    Array.isArray(named) && named.some((key) => typeof key === 'string' && functionName.endsWith(`-${key}`))
  );
}

/** The Lambda entry point. */
export const handler = createSubscriberHandler(
  failFile === undefined || failFile === ''
    ? {}
    : {
        register: (events) =>
          events.onAny(() => {
            if (switchedToFail(failFile))
              throw new Error('failing on purpose (FORGEBRIDGE_EXAMPLE_FAIL_FILE)');
          }),
      },
);
