/**
 * The example catch-all subscribers' failure switch, a test aid of the local stack only: with
 * `FORGEBRIDGE_EXAMPLE_FAIL_FILE` set (the local stack sets it; a deployed stage never does) and that file holding
 * `{ "fail": ["onEverything"] }`, each function named there fails every delivery it gets, as a bad deploy would,
 * until the file no longer names it, with one `failing on purpose` warning (`delivery`) per attempt. The file is
 * read at each delivery, so the switch turns on and off live.
 */
import { readFileSync } from 'node:fs';
import type { SubscriberHandlerOptions } from '../../lib/aws/index.js';

/** Whether the file names this function (`forgebridge-<stage>-<key>`) now. */
function switchedToFail(file: string, functionName: string): boolean {
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

/** The handler options of the switch: none without the variable, else a handler that fails while switched on. */
export function failSwitch(env: NodeJS.ProcessEnv = process.env): SubscriberHandlerOptions {
  const file = env.FORGEBRIDGE_EXAMPLE_FAIL_FILE;
  if (file === undefined || file === '') return {};
  const functionName = env.AWS_LAMBDA_FUNCTION_NAME ?? '';
  return {
    register: (events, { logger }) =>
      events.onAny(({ id }) => {
        if (switchedToFail(file, functionName)) {
          // One line per failed attempt: how a test knows the bus's retries of a delivery are used up.
          logger.warn('failing on purpose', { delivery: id });
          throw new Error('failing on purpose (FORGEBRIDGE_EXAMPLE_FAIL_FILE)');
        }
      }),
  };
}
