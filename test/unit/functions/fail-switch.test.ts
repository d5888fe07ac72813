// The example catch-all's failure switch (a test aid of the local stack only): off without its variable, on for
// the functions its file names while the file names them, off again when the file is gone or unreadable.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { failSwitch } from '../../../functions/catch-all/fail-switch.js';
import { createEventHandler } from '../../../lib/webhooks/index.js';

const dir = mkdtempSync(join(tmpdir(), 'fail-switch-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const warnings: unknown[][] = [];

/** Receives one push through the handlers the switch registers; resolves whether it failed. */
async function fails(env: NodeJS.ProcessEnv): Promise<boolean> {
  const events = createEventHandler();
  const options = failSwitch(env);
  options.register?.(events, {
    logger: {
      info: () => undefined,
      warn: (...line: unknown[]) => void warnings.push(line),
      error: () => undefined,
    },
  });
  try {
    await events.receive({ id: 'd-1', name: 'push', payload: { ref: 'refs/heads/main' } } as never);
    return false;
  } catch {
    return true;
  }
}

describe('failSwitch()', () => {
  const file = join(dir, 'fail.json');
  const env = {
    FORGEBRIDGE_EXAMPLE_FAIL_FILE: file,
    AWS_LAMBDA_FUNCTION_NAME: 'forgebridge-local-onEverything',
  };

  it('registers nothing without FORGEBRIDGE_EXAMPLE_FAIL_FILE', () => {
    expect(failSwitch({})).toEqual({});
    expect(failSwitch({ FORGEBRIDGE_EXAMPLE_FAIL_FILE: '' })).toEqual({});
  });

  it('fails every delivery while the file names the function, and no longer once it does not', async () => {
    expect(await fails(env)).toBe(false);
    writeFileSync(file, JSON.stringify({ fail: ['onEverything'] }));
    expect(await fails(env)).toBe(true);
    // One warning per failed attempt, naming the delivery.
    expect(warnings).toEqual([['failing on purpose', { delivery: 'd-1' }]]);
    expect(await fails({ ...env, AWS_LAMBDA_FUNCTION_NAME: 'forgebridge-local-onPush' })).toBe(false);
    writeFileSync(file, JSON.stringify({ fail: ['onPush'] }));
    expect(await fails(env)).toBe(false);
    writeFileSync(file, '{ not json');
    expect(await fails(env)).toBe(false);
    rmSync(file);
    expect(await fails(env)).toBe(false);
    expect(warnings).toHaveLength(1);
  });
});
