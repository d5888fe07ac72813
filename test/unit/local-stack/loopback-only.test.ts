// local-stack/loopback-only.cjs, preloaded into the `osls offline` child: a server that names no host binds
// 127.0.0.1, one that names a host keeps it.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const preload = fileURLToPath(new URL('../../../local-stack/loopback-only.cjs', import.meta.url));

async function addressOf(listenCall: string): Promise<string> {
  const script = `const net = require('node:net'); const s = net.createServer();
    ${listenCall}; s.on('listening', () => { console.log(s.address().address); s.close(); });`;
  const { stdout } = await run(process.execPath, ['--require', preload, '-e', script]);
  return stdout.trim();
}

describe('loopback-only preload', () => {
  it.each([
    ['listen(port)', 's.listen(0)'],
    ['listen(port, callback)', 's.listen(0, () => {})'],
    ['listen()', 's.listen()'],
    ['listen({ port })', 's.listen({ port: 0 })'],
  ])('binds 127.0.0.1 for %s', async (_label, call) => {
    expect(await addressOf(call)).toBe('127.0.0.1');
  });

  it('keeps a host the caller names', async () => {
    expect(await addressOf("s.listen(0, '127.0.0.2')")).toBe('127.0.0.2');
  });
});
