// `forgebridge verify` (the CLI as a process) on Standard Webhooks deliveries signed by the real package: the
// verdict and the plain-words reason, with neither the secret nor a signature printed.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanCliEnv, runCli } from '../../helpers/cli.js';
import { registerSecret } from '../../helpers/secrets.js';

const SECRET = `whsec_${randomBytes(32).toString('base64')}`;
registerSecret(SECRET);
const dir = mkdtempSync(join(tmpdir(), 'forgebridge-verify-standard-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const body = JSON.stringify({ type: 'contact.created', data: { name: 'Zoë' } });
const bodyFile = join(dir, 'body.json');
writeFileSync(bodyFile, body);

function headerArgs(offset: number, id = 'msg_cli') {
  const timestamp = Math.floor(Date.now() / 1000) + offset;
  const signature = new Webhook(SECRET).sign(id, new Date(timestamp * 1000), body);
  return {
    signature,
    args: [
      '-H',
      `webhook-id: ${id}`,
      '-H',
      `webhook-timestamp: ${timestamp}`,
      '-H',
      `webhook-signature: ${signature}`,
    ],
  };
}

const verify = (args: string[]) =>
  runCli(['verify', bodyFile, '--forge', 'standard', '--secret', SECRET, ...args], cleanCliEnv());

describe('forgebridge verify --forge standard', () => {
  it('says verified (exit 0) for a delivery the package signed', async () => {
    const { args, signature } = headerArgs(0);
    const result = await verify(args);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^verdict {2}verified$/m);
    expect(result.stdout).toContain('checked  webhook-signature  v1,');
    expect(result.stdout).not.toContain(signature.slice(3, 20));
    expect(result.stdout + result.stderr).not.toContain(SECRET.slice(6));
  });

  it('says how stale a delivery is (exit 1), and that its signature matches otherwise', async () => {
    const result = await verify(headerArgs(-1800).args);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^verdict {2}bad_signature$/m);
    expect(result.stdout).toMatch(
      /"webhook-timestamp" is 18\d\d s \(30 min \d+ s\) old, beyond the tolerance of 300 s/,
    );
    expect(result.stdout).toContain('the signature itself matches');
  });

  it('names a wrong secret', async () => {
    const other = `whsec_${randomBytes(32).toString('base64')}`;
    const { args } = headerArgs(0);
    const result = await runCli(
      ['verify', bodyFile, '--forge', 'standard', '--secret', other, ...args],
      cleanCliEnv(),
    );
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('was not made with the configured secret');
  });
});
