// How the CLI finds where to post: the local stack's sources from the state file `npm start` writes (each with
// its forge, URL and own secret), "--source" and "--forge" picking one, and the forge-shaped samples `send` posts.
import { chmodSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CliError } from '../../../lib/cli/errors.js';
import {
  DEFAULT_WEBHOOK_URL,
  DEVELOPMENT_WEBHOOK_SECRET,
  localSources,
  resolveTarget,
  sourceLabel,
} from '../../../lib/cli/local-stack.js';
import { type LocalSource, readStackState, STATE_FILE, stateFile } from '../../../lib/cli/state-file.js';
import {
  Forges,
  forgeOwnSample,
  forgeOwnSampleNames,
  hasOwnShapes,
  routeForgeEvent,
} from '../../../lib/webhooks/index.js';
import { forgeSample } from '../../../local-stack/sample-deliveries.js';
import { LOCAL_SOURCES, localSourceSecret } from '../../../local-stack/stack.js';
import { localStackState, sourceLines, writeStateFile } from '../../../local-stack/state-file.js';

const dir = mkdtempSync(join(tmpdir(), 'forgebridge-cli-sources-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const base = 'http://127.0.0.1:3999/webhooks';
/** The sources as the local stack builds them over `base` and `secret`. */
const stackSources = (secret: string): LocalSource[] =>
  LOCAL_SOURCES.map(({ name, forge }) => ({
    name,
    forge,
    url: name === 'default' ? base : `${base}/${name}`,
    secret: localSourceSecret(secret, name),
  }));

let files = 0;
/** Writes the state file a stack with these sources would write, and the environment that points at it. */
function stateOf(sources: LocalSource[]): NodeJS.ProcessEnv {
  files += 1;
  const file = join(dir, `state-${files}.json`);
  writeStateFile(
    {
      webhookUrl: base,
      secret: 'stack-secret',
      sources,
      endpoints: { dynamodb: 'http://127.0.0.1:8000' },
      names: { deliveriesTable: 'forgebridge-local-deliveries', dedupeTable: 'forgebridge-local-dedupe' },
    },
    file,
  );
  return { FORGEBRIDGE_STATE_FILE: file };
}

describe('the state file', () => {
  it('is written by the local stack with every source and read back by the CLI as written', () => {
    const env = stateOf(stackSources('stack-secret'));
    const state = readStackState(stateFile(env));
    expect(state.webhookUrl).toBe(base);
    expect(state.sources).toEqual(stackSources('stack-secret'));
    expect(state.sources?.map((source) => source.forge)).toEqual([...Forges]);
  });

  it('reads back whole what the stack wrote: one schema for the writer and every command', () => {
    const stack = {
      webhookUrl: base,
      secret: 'stack-secret',
      sources: stackSources('stack-secret'),
      endpoints: { dynamodb: 'http://127.0.0.1:8000', lambda: 'http://127.0.0.1:3002' },
      names: { deliveriesTable: 'forgebridge-local-deliveries', dedupeTable: 'forgebridge-local-dedupe' },
    };
    const file = join(dir, 'whole.json');
    writeStateFile(stack, file);
    expect(readStackState(file)).toEqual(localStackState(stack));
  });

  it('is readable by its owner only, also when an earlier one was readable by others', () => {
    const file = join(dir, `state-${files + 1}.json`);
    writeFileSync(file, '{}', { mode: 0o644 });
    chmodSync(file, 0o644);
    const env = stateOf(stackSources('stack-secret'));
    expect(env.FORGEBRIDGE_STATE_FILE).toBe(file);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readStackState(file).sources).toEqual(stackSources('stack-secret'));
    // Nothing left beside it.
    expect(readdirSync(dir).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('is found through FORGEBRIDGE_STATE_FILE, else in the repository', () => {
    expect(stateFile({ FORGEBRIDGE_STATE_FILE: '/x/state.json' })).toBe('/x/state.json');
    expect(stateFile({ FORGEBRIDGE_STATE_FILE: '' })).toBe(STATE_FILE);
    expect(stateFile({})).toBe(STATE_FILE);
  });

  it('keeps the valid sources only, and gives nothing for a missing, broken or non-object file', () => {
    const file = join(dir, 'mixed.json');
    const good = { name: 'gitlab', forge: 'gitlab', url: `${base}/gitlab`, secret: 's-gitlab' };
    writeFileSync(
      file,
      JSON.stringify({
        webhookUrl: base,
        sources: [
          good,
          { ...good, name: 'Bad/Name' },
          { ...good, forge: 'sourcehut' },
          { ...good, url: 'file:///etc/passwd' },
          { ...good, secret: '' },
          null,
          'default',
        ],
      }),
    );
    expect(readStackState(file)).toEqual({ webhookUrl: base, sources: [good] });
    writeFileSync(file, '{ half');
    expect(readStackState(file)).toEqual({});
    writeFileSync(file, '[1, 2]');
    expect(readStackState(file)).toEqual({});
    expect(readStackState(join(dir, 'missing.json'))).toEqual({});
  });

  it('holds what the CLI needs and nothing of the stack it does not', () => {
    const stack = {
      webhookUrl: base,
      secret: 'k',
      sources: [{ name: 'default', forge: 'generic', url: base, secret: 'k' }] as const,
      endpoints: { dynamodb: 'http://127.0.0.1:8000', s3: 'x', eventBridge: 'http://127.0.0.1:4010' },
      names: { deliveriesTable: 't', dedupeTable: 'd', bus: 'b', bucket: 'k' },
    };
    const state = localStackState(stack);
    expect(state).toEqual({
      webhookUrl: base,
      secret: 'k',
      sources: [{ name: 'default', forge: 'generic', url: base, secret: 'k' }],
      // The bus and its endpoint: `replay --since` puts deliveries on it again.
      endpoints: { dynamodb: 'http://127.0.0.1:8000', eventBridge: 'http://127.0.0.1:4010' },
      names: { deliveriesTable: 't', dedupeTable: 'd', bus: 'b' },
    });
    const file = join(dir, 'bus.json');
    writeFileSync(file, JSON.stringify(state));
    expect(readStackState(file).endpoints?.eventBridge).toBe('http://127.0.0.1:4010');
    expect(readStackState(file).names?.bus).toBe('b');
  });
});

describe('localSources()', () => {
  it("without a list in the state file, lays the sources out as the local stack does (its URL and secret's)", () => {
    expect(localSources({ webhookUrl: `${base}/`, secret: 'stack-secret,older' }, {})).toEqual(
      stackSources('stack-secret'),
    );
  });

  it('without a state file, uses FORGEBRIDGE_WEBHOOK_SECRET, else the development secret, at the default URL', () => {
    const [first, second] = localSources({}, { FORGEBRIDGE_WEBHOOK_SECRET: 'mine' });
    expect(first).toEqual({ name: 'default', forge: 'generic', url: DEFAULT_WEBHOOK_URL, secret: 'mine' });
    expect(second).toEqual({
      name: 'github',
      forge: 'github',
      url: `${DEFAULT_WEBHOOK_URL}/github`,
      secret: 'mine-github',
    });
    expect(localSources({}, {})[4]?.secret).toBe(`${DEVELOPMENT_WEBHOOK_SECRET}-gitlab`);
  });
});

describe('resolveTarget() with the local stack', () => {
  const env = stateOf(stackSources('stack-secret'));

  it('posts to the named source with its own secret and forge', () => {
    for (const source of stackSources('stack-secret')) {
      expect(resolveTarget({ source: source.name }, env)).toEqual({
        url: source.url,
        secret: source.secret,
        local: true,
        forge: source.forge,
        source: source.name,
      });
    }
  });

  it('posts "--forge" alone to the local source of that forge, and says so', () => {
    for (const forge of Forges.filter((name) => name !== 'generic')) {
      const target = resolveTarget({ forge }, env);
      expect(target).toEqual({
        url: `${base}/${forge}`,
        secret: localSourceSecret('stack-secret', forge),
        local: true,
        forge,
        source: forge,
        pickedByForge: true,
      });
      expect(sourceLabel(target)).toBe(`source ${forge} (the local stack's source for --forge ${forge})`);
    }
    expect(resolveTarget({ forge: 'generic' }, env)).toMatchObject({ url: base, source: 'default' });
    expect(sourceLabel(resolveTarget({}, env))).toBe('source default');
  });

  it('takes "--secret" and "--forge" over the source\'s, and the state file over FORGEBRIDGE_WEBHOOK_SECRET', () => {
    expect(resolveTarget({ source: 'gitlab', secret: 'wrong' }, env).secret).toBe('wrong');
    expect(resolveTarget({ source: 'github', forge: 'gitea' }, env)).toMatchObject({
      url: `${base}/github`,
      forge: 'gitea',
    });
    expect(resolveTarget({ source: 'gitea' }, { ...env, FORGEBRIDGE_WEBHOOK_SECRET: 'other' }).secret).toBe(
      'stack-secret-gitea',
    );
  });

  it("signs with the first of a source's secrets", () => {
    const rotated = stateOf([{ name: 'default', forge: 'generic', url: base, secret: 'new,old' }]);
    expect(resolveTarget({}, rotated).secret).toBe('new');
  });

  it('names the sources in one line when the source or the forge has none', () => {
    const onlyDefault = stateOf([{ name: 'default', forge: 'generic', url: base, secret: 'k' }]);
    expect(() => resolveTarget({ forge: 'gitlab' }, onlyDefault)).toThrow(
      new CliError(
        'the local stack has no gitlab source: pass "--source <name>" (its sources: default (generic))',
      ),
    );
    expect(() => resolveTarget({ source: 'gitlab' }, onlyDefault)).toThrow(
      new CliError('the local stack has no source "gitlab" (its sources: default (generic))'),
    );
    expect(() => resolveTarget({ source: 'Bad/Name' }, env)).toThrow(CliError);
  });

  it('with a URL, appends the source and keeps "--forge" as given', () => {
    expect(
      resolveTarget(
        { url: 'https://hooks.example.com/webhooks', secret: 's', source: 'gitlab', forge: 'gitlab' },
        env,
      ),
    ).toEqual({
      url: 'https://hooks.example.com/webhooks/gitlab',
      secret: 's',
      local: false,
      forge: 'gitlab',
      source: 'gitlab',
    });
  });
});

describe('the forge-shaped samples', () => {
  it('route to the catalogue name they are the sample of, as a real delivery of that forge would', () => {
    for (const forge of Forges) {
      for (const name of forgeOwnSampleNames(forge)) {
        const sample = forgeOwnSample(forge, name);
        if (sample === undefined) throw new Error(`no ${forge} sample for ${name}`);
        const route = routeForgeEvent(forge, sample.nativeName, sample.payload);
        expect(route.action === undefined ? route.name : `${route.name}.${route.action}`).toBe(name);
      }
    }
    expect(forgeOwnSampleNames('gitlab')).toEqual(['pull_request.opened', 'issues.opened', 'push']);
    expect(forgeOwnSampleNames('github')).toEqual([]);
  });

  it("are the inspector's, one copy each (a fresh one per call)", () => {
    for (const forge of ['gitlab', 'bitbucket'] as const) {
      expect(hasOwnShapes(forge)).toBe(true);
      const sample = forgeOwnSample(forge, 'push');
      expect(forgeSample(forge, 'push')).toEqual({ forge, ...sample });
      (sample?.payload as Record<string, unknown>).changed = true;
      expect(forgeOwnSample(forge, 'push')?.payload.changed).toBeUndefined();
    }
    expect(hasOwnShapes('gitea')).toBe(false);
    expect(forgeOwnSample('gitea', 'push')).toBeUndefined();
    expect(forgeOwnSample('gitlab', 'release.published')).toBeUndefined();
  });
});

describe("the ready banner's sources", () => {
  it('lists each source on one line, in columns', () => {
    const lines = sourceLines(stackSources('k').slice(0, 2), '  ');
    expect(lines).toEqual([
      `  default  generic  ${base}         k`,
      `  github   github   ${base}/github  k-github`,
    ]);
  });
});
