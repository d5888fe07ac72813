import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { REBUILT_STAMP } from '../../../local-stack/function-build.js';

const OfflineReload = createRequire(import.meta.url)('../../../local-stack/offline-reload.cjs') as new (
  serverless: unknown,
) => { hooks: Record<string, () => void> };

const folder = mkdtempSync(join(tmpdir(), 'forgebridge-offline-reload-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

/** The part of osls the plugin uses: the service's custom section and the plugin manager. */
function fakeServerless(location: string | undefined) {
  const spawn = vi.fn(async (_event: string) => {});
  return {
    spawn,
    serverless: {
      serviceDir: '/',
      service: { custom: { 'serverless-offline': { location } } },
      pluginManager: { spawn },
    },
  };
}

describe('local-stack/offline-reload.cjs', () => {
  it('tells serverless-offline the functions changed each time the build touches its stamp, until offline ends', async () => {
    const { serverless, spawn } = fakeServerless(folder);
    const plugin = new OfflineReload(serverless);
    plugin.hooks['before:offline:start:init']?.();
    writeFileSync(join(folder, 'other-file'), 'not the stamp');
    writeFileSync(join(folder, REBUILT_STAMP), '1\n');
    await vi.waitFor(() => expect(spawn).toHaveBeenCalledWith('offline:functionsUpdated'), {
      timeout: 5_000,
    });
    const calls = spawn.mock.calls.length;

    plugin.hooks['before:offline:start:end']?.();
    writeFileSync(join(folder, REBUILT_STAMP), '2\n');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(spawn.mock.calls.length).toBe(calls);
    expect(spawn.mock.calls.every(([event]) => event === 'offline:functionsUpdated')).toBe(true);
  });

  it('does nothing without a build folder of the stack’s (serverless-esbuild sets the location then)', () => {
    for (const location of [undefined, '', join(folder, 'missing')]) {
      const { serverless, spawn } = fakeServerless(location);
      const plugin = new OfflineReload(serverless);
      expect(() => plugin.hooks['before:offline:start:init']?.()).not.toThrow();
      plugin.hooks['before:offline:start:end']?.();
      expect(spawn).not.toHaveBeenCalled();
    }
  });
});
