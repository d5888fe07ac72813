// `forgebridge connect` writes the hook into config/<stage>.yml: the named source's entry gains its `hook` and
// nothing else of the file changes (comments, order, a flow entry on its line), the stage reads back with the hook,
// and a file it cannot write sensibly is left as it was with one line saying why.
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readIngestConfig } from '../../../lib/aws/stage/function-config.js';
import { readStageConfig } from '../../../lib/aws/stage/index.js';
import { withHook, writeHook } from '../../../lib/cli/hook-config-file.js';

const LOCAL = readFileSync(new URL('../../../config/local.yml', import.meta.url), 'utf8');
const HOOK = {
  kind: 'repo',
  api: 'http://127.0.0.1:4100',
  id: 4001,
  owner: 'acme',
  repo: 'web',
  provider: 'forge',
};

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'forgebridge-hook-file-'));
  mkdirSync(join(dir, 'config'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('withHook', () => {
  it("adds the hook to the local stack's github source and changes no other line", () => {
    const written = withHook(LOCAL, 'config/local.yml', 'github', HOOK);
    const before = LOCAL.split('\n');
    const after = written.split('\n');
    expect(after).toHaveLength(before.length);
    const changed = after.flatMap((line, n) => (line === before[n] ? [] : [line]));
    expect(changed).toEqual([
      '  - { name: github, forge: github, secretParameter: /forgebridge/local/webhook-secret/github, hook: { kind: repo, api: http://127.0.0.1:4100, id: 4001, owner: acme, repo: web, provider: forge } }',
    ]);
    writeFileSync(join(dir, 'config', 'local.yml'), written);
    const config = readStageConfig({ stage: 'local', dir, env: {}, offline: true });
    const { sources } = readIngestConfig({ ...config.settings, IS_OFFLINE: 'true' });
    expect(sources.find((source) => source.name === 'github')?.hook).toEqual(HOOK);
    expect(sources.filter((source) => source.hook !== undefined)).toHaveLength(1);
  });

  it('writes a block entry as a block, keeps its comments, and replaces a hook it had', () => {
    const text = `# prod
FORGEBRIDGE_WEBHOOK_SOURCES:
  - name: gl # the GitLab one
    forge: gitlab
    secretParameter: /forgebridge/prod/webhook-secret/gl
    hook:
      kind: project
      id: 1
      project: old/one
      provider: forge
FORGEBRIDGE_LOG_LEVEL: INFO # loud
`;
    const hook = {
      kind: 'project',
      api: 'https://gitlab.example/api/v4',
      id: 7001,
      project: 'acme/web',
      provider: 'ci',
    };
    expect(withHook(text, 'config/prod.yml', 'gl', hook)).toBe(`# prod
FORGEBRIDGE_WEBHOOK_SOURCES:
  - name: gl # the GitLab one
    forge: gitlab
    secretParameter: /forgebridge/prod/webhook-secret/gl
    hook:
      kind: project
      api: https://gitlab.example/api/v4
      id: 7001
      project: acme/web
      provider: ci
FORGEBRIDGE_LOG_LEVEL: INFO # loud
`);
  });

  it('refuses a file without the sources list, an unknown source, and a hook its source cannot take', () => {
    expect(() => withHook('FORGEBRIDGE_FORGE: github\n', 'config/dev.yml', 'default', HOOK)).toThrow(
      'config/dev.yml has no "FORGEBRIDGE_WEBHOOK_SOURCES" list to write the hook into',
    );
    expect(() => withHook(LOCAL, 'config/local.yml', 'nope', HOOK)).toThrow(
      'config/local.yml lists no source "nope" in "FORGEBRIDGE_WEBHOOK_SOURCES"',
    );
    expect(() => withHook(LOCAL, 'config/local.yml', 'gitlab', HOOK)).toThrow(
      /^config\/local\.yml left unchanged: .*"repo" is a github hook/,
    );
    expect(() => withHook('a: [', 'config/x.yml', 'x', HOOK)).toThrow('config/x.yml: not valid YAML');
  });
});

describe('writeHook', () => {
  it('writes in place, keeping the mode, leaving no temporary file; a second write of the same hook changes nothing', () => {
    const file = join(dir, 'config', 'local.yml');
    writeFileSync(file, LOCAL);
    chmodSync(file, 0o640);
    writeHook(file, 'github', HOOK);
    expect(readFileSync(file, 'utf8')).toContain('hook: { kind: repo');
    expect(statSync(file).mode & 0o777).toBe(0o640);
    const once = readFileSync(file, 'utf8');
    writeHook(file, 'github', HOOK);
    expect(readFileSync(file, 'utf8')).toBe(once);
    expect(readdirSync(join(dir, 'config'))).toEqual(['local.yml']);
  });

  it('says so in one line when the file is missing', () => {
    expect(() => writeHook(join(dir, 'config', 'prod.yml'), 'github', HOOK)).toThrow(
      /^cannot read ".*prod\.yml": the stage file must exist/,
    );
  });
});
