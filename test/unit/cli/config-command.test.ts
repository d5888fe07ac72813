// `forgebridge config --stage <name>`: every setting of a stage with its origin, the sources and where each one's
// secret is read; a wrong value is exit 2 with the setting and the file named, and never a secret's value.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startMain } from '../../helpers/cli-in-process.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'forgebridge-config-command-'));
  mkdirSync(join(dir, 'config'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const run = (args: string[], env: Record<string, string> = {}) =>
  startMain(['config', '--dir', dir, ...args], env).done;

describe('forgebridge config', () => {
  it('prints every setting, marking what the file and the environment set, then the sources', async () => {
    writeFileSync(
      join(dir, 'config/prod.yml'),
      'FORGEBRIDGE_WEBHOOK_SOURCES:\n  - { name: github, forge: github, secretParameter: /fb/prod/github }\nFORGEBRIDGE_LOG_LEVEL: INFO\n',
    );
    const { code, stdout, stderr } = await run(['--stage', 'prod'], { FORGEBRIDGE_INGEST_TIMEOUT: '20' });
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const lines = stdout.split('\n');
    expect(lines[0]).toBe('stage prod (config/prod.yml; a FORGEBRIDGE_* variable set here overrides it)');
    expect(lines.find((line) => line.includes('FORGEBRIDGE_LOG_LEVEL'))).toMatch(/INFO {2}file$/);
    expect(lines.find((line) => line.includes('FORGEBRIDGE_INGEST_TIMEOUT'))).toMatch(/20 {2}environment$/);
    expect(lines.find((line) => line.includes('FORGEBRIDGE_BUS_NAME'))).toMatch(/forgebridge-prod$/);
    expect(lines.find((line) => line.includes('FORGEBRIDGE_BUCKET'))).toContain('(named by CloudFormation)');
    expect(lines.find((line) => line.includes('FORGEBRIDGE_PUBLISH_BUDGET_MS'))).toContain(
      '(library default)',
    );
    expect(lines.slice(lines.indexOf('webhook sources'))).toEqual([
      'webhook sources',
      expect.stringMatching(/^ {2}github +\/webhooks\/github +secret from SSM \/fb\/prod\/github$/),
      '',
    ]);
  });

  it('says a stage without a file is all defaults, and that the local stack reads secrets from the environment', async () => {
    const dev = await run(['--stage', 'dev']);
    expect(dev.code).toBe(0);
    expect(dev.stdout.split('\n')[0]).toBe(
      'stage dev (no file: defaults; a FORGEBRIDGE_* variable set here overrides it)',
    );
    writeFileSync(
      join(dir, 'config/local.yml'),
      'FORGEBRIDGE_WEBHOOK_SOURCES:\n  - { name: gitlab, forge: gitlab }\n',
    );
    const local = await run(['--stage', 'local', '--json']);
    expect(local.code).toBe(0);
    // Each source as the ingest reads it: its forge, its offline variable and its delivery options, no secret.
    expect(JSON.parse(local.stdout).sources).toEqual([
      {
        name: 'gitlab',
        forge: 'gitlab',
        secretEnv: 'FORGEBRIDGE_WEBHOOK_SECRET_GITLAB',
        deliveryOptions: { allowSha1: true, forge: 'gitlab' },
      },
    ]);
  });

  it('stops with exit 2 and one line naming the setting and the file, never a value from a secret key', async () => {
    writeFileSync(join(dir, 'config/prod.yml'), 'FORGEBRIDGE_FORGE: githab\n');
    const wrong = await run(['--stage', 'prod']);
    expect(wrong.code).toBe(2);
    expect(wrong.stdout).toBe('');
    expect(wrong.stderr).toMatch(
      /^forgebridge: stage "prod": environment variable "FORGEBRIDGE_FORGE" must be one of .* \(the value from .*config\/prod\.yml\)\n$/,
    );
    writeFileSync(join(dir, 'config/prod.yml'), 'FORGEBRIDGE_WEBHOOK_SECRET: s3cr3t-value\n');
    const secret = await run(['--stage', 'prod']);
    expect(secret.code).toBe(2);
    expect(secret.stderr).toContain('"FORGEBRIDGE_WEBHOOK_SECRET" is a secret');
    expect(secret.stderr).not.toContain('s3cr3t-value');
    const badStage = await run(['--stage', '../x']);
    expect(badStage.code).toBe(2);
    expect(badStage.stderr).toContain('stage "../x" must be letters, digits and hyphens');
  });
});
