// The npm package as another project gets it: `npm pack` (its prepack builds dist/), the tarball installed into
// an empty folder from the npm cache the bootstrap filled, each entry imported under the pinned Node 22 (and the
// libraries under the machine's Node 20), the CLI run from the install, a consumer type-checked against the
// shipped declarations, and publint and attw over the tarball. One pack and one install for the whole file.
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NODE, ROOT } from '../../helpers/cli.js';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(
  command: string,
  args: string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv },
): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      { cwd: options.cwd, env: options.env ?? env, timeout: 240_000, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** A Node 20 on PATH (`which -a node`), for the libraries' promise to run there. */
function findNode20(): string {
  const candidates = execFileSync('which', ['-a', 'node'], { encoding: 'utf8' }).split('\n').filter(Boolean);
  for (const candidate of candidates) {
    const version = execFileSync(candidate, ['--version'], { encoding: 'utf8' }).trim();
    if (version.startsWith('v20.')) return candidate;
  }
  throw new Error(`no Node 20 among ${candidates.join(', ')}: the libraries' Node 20 support is untested`);
}

// npm hands every script the cache it uses (the one the bootstrap filled); the install reads from it
// (--prefer-offline), so it works without the registry. Never a cache under the run's throw-away $HOME.
const cache = process.env.npm_config_cache;
const env: NodeJS.ProcessEnv = {
  ...process.env,
  NO_COLOR: '1',
  npm_config_cache: cache,
  npm_config_update_notifier: 'false',
};
delete env.FORCE_COLOR;

const ENTRIES = ['webhooks', 'oauth2', 'aws'] as const;

let work: string;
let tarball: string;
let consumer: string;

beforeAll(async () => {
  if (cache === undefined || cache.length === 0) {
    throw new Error(
      'npm_config_cache is not set: run this file through `npm test` (npm sets it to its cache)',
    );
  }
  work = mkdtempSync(join(tmpdir(), 'forgebridge-package-'));
  const packs = join(work, 'pack');
  consumer = join(work, 'consumer');
  mkdirSync(packs);
  mkdirSync(consumer);
  const packed = await run('npm', ['pack', '--pack-destination', packs, '--loglevel=error'], { cwd: ROOT });
  expect(packed.stderr).toBe('');
  expect(packed.code).toBe(0);
  const files = readdirSync(packs);
  expect(files).toEqual([expect.stringMatching(/^forgebridge-\d+\.\d+\.\d+\.tgz$/)]);
  tarball = join(packs, files[0] as string);
  writeFileSync(
    join(consumer, 'package.json'),
    `${JSON.stringify({ name: 'forgebridge-consumer', private: true, type: 'module' }, null, 2)}\n`,
  );
  const installed = await run(
    'npm',
    ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', tarball],
    { cwd: consumer },
  );
  expect(installed.stderr).not.toMatch(/ERR!/);
  expect(installed.code).toBe(0);
}, 600_000);

afterAll(() => {
  if (work !== undefined) rmSync(work, { recursive: true, force: true });
});

/** The sorted export names of `forgebridge/<entry>` imported by `node` in the consumer folder. */
async function exportNames(node: string, entry: string): Promise<string[]> {
  const script = `const m = await import('forgebridge/${entry}'); process.stdout.write(JSON.stringify(Object.keys(m).sort()));`;
  const result = await run(node, ['--input-type=module', '-e', script], { cwd: consumer });
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  return JSON.parse(result.stdout) as string[];
}

/** The export names of the TypeScript source of an entry. */
async function sourceNames(entry: string): Promise<string[]> {
  return Object.keys(await import(join(ROOT, 'lib', entry, 'index.ts'))).sort();
}

describe('the packed tarball', () => {
  it('ships the compiled entries, their declarations and the bin, and no TypeScript source nor test', async () => {
    const listing = await run('tar', ['-tzf', tarball], { cwd: work });
    expect(listing.code).toBe(0);
    const files = listing.stdout.split('\n').filter(Boolean);
    for (const entry of ENTRIES) {
      expect(files).toContain(`package/dist/${entry}/index.js`);
      expect(files).toContain(`package/dist/${entry}/index.d.ts`);
    }
    expect(files).toContain('package/bin/forgebridge.js');
    expect(files).toContain('package/dist/cli/run.js');
    // The inspector's page (forgebridge inspect --stage) is served from the files beside its module.
    expect(files).toContain('package/dist/inspector/public/index.html');
    expect(files.filter((file) => /\.ts$/.test(file) && !file.endsWith('.d.ts'))).toEqual([]);
    expect(files.filter((file) => /^package\/(test|lib|functions|local-stack|scripts)\//.test(file))).toEqual(
      [],
    );
  });

  it('passes publint with nothing to say', async () => {
    const result = await run(join(ROOT, 'node_modules/.bin/publint'), ['run', tarball], { cwd: work });
    expect(result.stderr).toBe('');
    expect(result.stdout).toContain('All good!');
    expect(result.code).toBe(0);
  });

  it('passes attw: every entry resolves to its types under node16 (ESM) and bundler resolution', async () => {
    const result = await run(
      join(ROOT, 'node_modules/.bin/attw'),
      [tarball, '--profile', 'esm-only', '--format', 'json'],
      { cwd: work },
    );
    const report = JSON.parse(result.stdout) as {
      problems: Record<string, Array<{ entrypoint: string; resolutionKind?: string }>>;
    };
    // An ESM-only package has no CommonJS and no node10 (main-field) resolution: the esm-only profile ignores those.
    const counted = Object.values(report.problems)
      .flat()
      .filter((problem) => problem.resolutionKind !== 'node10' && problem.resolutionKind !== 'node16-cjs');
    expect(counted).toEqual([]);
    expect(result.code).toBe(0);
  });
});

describe('the installed package', () => {
  for (const entry of ENTRIES) {
    it(`exports what lib/${entry} exports, imported by Node 22`, async () => {
      const names = await exportNames(NODE, entry);
      expect(names.length).toBeGreaterThan(10);
      expect(names).toEqual(await sourceNames(entry));
    });
  }

  for (const entry of ['webhooks', 'oauth2']) {
    it(`imports forgebridge/${entry} under Node 20`, async () => {
      expect(await exportNames(findNode20(), entry)).toEqual(await sourceNames(entry));
    });
  }

  it('signs and verifies with forgebridge/webhooks under Node 20', async () => {
    const script = [
      "const { sign, verify } = await import('forgebridge/webhooks');",
      "const signature = sign('s3cret', '{\"a\":1}');",
      "process.stdout.write(JSON.stringify([signature, verify('s3cret', '{\"a\":1}', signature), verify('s3cret', '{}', signature)]));",
    ].join('\n');
    const result = await run(findNode20(), ['--input-type=module', '-e', script], { cwd: consumer });
    expect(result.stderr).toBe('');
    expect(JSON.parse(result.stdout)).toEqual([expect.stringMatching(/^sha256=[0-9a-f]{64}$/), true, false]);
  });

  it('runs the CLI bin from dist/ (no tsx) under Node 22: --help, --version', async () => {
    const bin = join(consumer, 'node_modules/forgebridge/bin/forgebridge.js');
    const help = await run(NODE, [bin, '--help'], { cwd: consumer });
    expect(help.stderr).toBe('');
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: forgebridge \[options\] \[command\]\n/);
    for (const command of ['send', 'verify', 'rules', 'deliveries', 'replay', 'dev']) {
      expect(help.stdout).toMatch(new RegExp(`^  ${command} `, 'm'));
    }
    const version = await run(NODE, [bin, '--version'], { cwd: consumer });
    expect(version.stdout).toBe('0.1.0\n');
  });

  it('`npx forgebridge` under Node 20 answers with no engine warning and no colour in a pipe', async () => {
    const node20 = findNode20();
    const path = `${dirname(node20)}${delimiter}${process.env.PATH ?? ''}`;
    // In this repository the project's own bin is not linked in node_modules/.bin: npx installs the project
    // into its cache (`_npx`) on its first run there, and that install checks the project's engines (today's
    // warnings). A fresh, offline cache makes every run a first run; the consumer runs its linked bin.
    for (const cwd of [ROOT, consumer]) {
      const npxCache = mkdtempSync(join(work, 'npx-cache-'));
      const result = await run('npx', ['forgebridge', '--help'], {
        cwd,
        env: {
          ...env,
          PATH: path,
          NO_COLOR: undefined,
          npm_config_cache: npxCache,
          npm_config_offline: 'true',
        },
      });
      expect({ cwd, stderr: result.stderr }).toEqual({ cwd, stderr: '' });
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/^Usage: forgebridge /);
      expect(result.stdout).not.toContain('\u001b[');
    }
  });

  it('ends every JSON answer with a newline (rules --json, verify --json), under Node 20 too', async () => {
    const bin = join(consumer, 'node_modules/forgebridge/bin/forgebridge.js');
    for (const node of [NODE, findNode20()]) {
      const rules = await run(node, [bin, 'rules', 'issues.opened', '--json'], { cwd: consumer });
      expect(rules.code).toBe(0);
      expect(rules.stdout.endsWith('}\n')).toBe(true);
      expect(JSON.parse(rules.stdout)).toMatchObject({ event: 'issues.opened' });
      const body = join(work, 'body.json');
      writeFileSync(body, '{"a":1}');
      const verify = await run(
        node,
        [bin, 'verify', body, '--secret', 's3cret', '--signature', `sha256=${'0'.repeat(64)}`, '--json'],
        { cwd: consumer },
      );
      expect(verify.code).toBe(1);
      expect(JSON.parse(verify.stdout).verdict).not.toBe('verified');
      expect(verify.stdout.endsWith('}\n')).toBe(true);
      expect(JSON.parse(verify.stdout)).toMatchObject({ verdict: expect.any(String) });
    }
  });

  it('type-checks a consumer against the shipped declarations (no `any` slips through)', async () => {
    // Each @ts-expect-error needs a real type to fail against: were a declaration missing (an `any`), the
    // directive itself would be the error.
    writeFileSync(
      join(consumer, 'consumer.ts'),
      `import { AccessToken, Client } from 'forgebridge/oauth2';
import { createSubscriber } from 'forgebridge/aws';
import { sign, verify, Webhooks } from 'forgebridge/webhooks';

export const valid: boolean = verify('s3cret', '{}', sign('s3cret', '{}'));
// @ts-expect-error: a secret is a string
sign(42, '{}');
const webhooks = new Webhooks({ secret: 's3cret' });
webhooks.on('issues.opened', ({ payload }) => {
  const action: 'opened' = payload.action;
  return void action;
});
// @ts-expect-error: not an event of the catalogue
webhooks.on('issues.exploded', () => undefined);
const client = new Client('id', 'secret', { site: 'https://auth.example' });
export const token = new AccessToken(client, 'token', { mode: 'body' });
// @ts-expect-error: not a token mode
new AccessToken(client, 'token', { mode: 'pigeon' });
export const receive = createSubscriber({ events: { receive: async () => undefined }, logger: console });
type DetailType = Parameters<typeof receive>[0]['detail-type'];
export const detailType: DetailType = 'issues';
// @ts-expect-error: an EventBridge detail-type is a string (the type comes from @types/aws-lambda)
export const badDetailType: DetailType = 42;
`,
    );
    writeFileSync(
      join(consumer, 'tsconfig.json'),
      `${JSON.stringify(
        {
          compilerOptions: {
            target: 'ES2023',
            lib: ['ES2023'],
            module: 'NodeNext',
            moduleResolution: 'NodeNext',
            strict: true,
            noEmit: true,
            skipLibCheck: true,
            types: ['node'],
            typeRoots: [join(ROOT, 'node_modules/@types')],
          },
          files: ['consumer.ts'],
        },
        null,
        2,
      )}\n`,
    );
    const result = await run(NODE, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], {
      cwd: consumer,
    });
    expect(result.stdout).toBe('');
    expect(result.code).toBe(0);
  });
});
