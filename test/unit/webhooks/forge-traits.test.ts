// A forge's traits live on its preset (lib/webhooks/forges.ts) and code reads the trait, not the forge's name:
// what each trait says per forge, what reads it (the warning on unknown event names, the secrets' form, the
// reconciler's hook kinds), and that no forge's name is tested outside the preset table.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { readReconcileConfig } from '../../../lib/aws/reconcile/config.js';
import { stageDefaults } from '../../../lib/aws/stage/index.js';
import { parseSourceHook } from '../../../lib/aws/stage/source-hook.js';
import { forgeOf, HOOK_APIS } from '../../../lib/cli/hook-apis/index.js';
import {
  asSentBy,
  createEventHandler,
  DeliveryLogForges,
  deliveryLogOf,
  Forges,
  forgeSecret,
  resolvePreset,
  routeForgeEvent,
  standardSecret,
  Webhooks,
} from '../../../lib/webhooks/index.js';

const ROOT = resolve(import.meta.dirname, '../../..');

describe('the presets’ traits', () => {
  it('has one neutral preset, the generic one', () => {
    expect(Forges.filter((forge) => resolvePreset(forge).neutral)).toEqual(['generic']);
  });

  it('takes a sender’s own event names and whsec_ secrets for the Standard Webhooks presets only', () => {
    expect(Forges.filter((forge) => resolvePreset(forge).eventNames === 'sender')).toEqual([
      'standard',
      'svix',
    ]);
    expect(Forges.filter((forge) => resolvePreset(forge).secretForm === 'whsec')).toEqual([
      'standard',
      'svix',
    ]);
  });

  it('gives GitHub and GitLab a delivery-log api, each with its own hook kinds', () => {
    const logs = Object.fromEntries(
      Forges.flatMap((forge) => {
        const log = resolvePreset(forge).deliveryLog;
        return log === undefined ? [] : [[forge, log]];
      }),
    );
    expect(logs).toEqual({
      github: { api: 'https://api.github.com', hookKinds: ['repo', 'org', 'app'], windowHours: 72 },
      gitlab: { api: 'https://gitlab.com/api/v4', hookKinds: ['project', 'group'], windowHours: 168 },
    });
    expect(DeliveryLogForges).toEqual(Object.keys(logs));
    expect(DeliveryLogForges.map((forge) => deliveryLogOf(forge).windowHours)).toEqual([72, 168]);
  });

  it('sets the reconciler’s default window from the forge’s deliveryLog trait, each overridable', () => {
    const hook = (forge: string, name: string, hook: Record<string, unknown>) => ({
      name,
      forge,
      secretParameter: `/${name}`,
      hook: { provider: 'forge', ...hook },
    });
    const env = {
      ...stageDefaults('ci'),
      IS_OFFLINE: 'true',
      FORGEBRIDGE_DEDUPE_TABLE: 'dedupe',
      FORGEBRIDGE_TOKEN_TABLE: 'tokens',
      FORGEBRIDGE_WEBHOOK_SOURCES: JSON.stringify([
        hook('github', 'gh', { kind: 'repo', owner: 'o', repo: 'r', id: 1 }),
        hook('gitlab', 'gl', { kind: 'project', project: 'o/r', id: 2 }),
      ]),
    };
    const windows = (over: Record<string, string>) =>
      readReconcileConfig({ ...env, ...over }).sources.map((source) => [source.forge, source.windowSeconds]);
    expect(windows({})).toEqual([
      ['github', 72 * 3600],
      ['gitlab', 168 * 3600],
    ]);
    expect(windows({ FORGEBRIDGE_RECONCILE_GITLAB_WINDOW_HOURS: '24' })).toEqual([
      ['github', 72 * 3600],
      ['gitlab', 24 * 3600],
    ]);
  });

  it('routes through the preset’s route', () => {
    expect(routeForgeEvent('svix', 'contact.created', {})).toEqual({
      name: 'contact',
      action: 'created',
      nativeAction: 'created',
    });
    expect(routeForgeEvent('github', 'issues', { action: 'opened' })).toEqual({
      name: 'issues',
      action: 'opened',
      nativeAction: 'opened',
    });
  });
});

describe('connect’s hooks APIs', () => {
  it('are one per forge with a delivery log, each on hook kinds its preset’s deliveryLog names', () => {
    expect(Object.keys(HOOK_APIS)).toEqual([...DeliveryLogForges]);
    for (const forge of DeliveryLogForges) {
      for (const kind of HOOK_APIS[forge].placeKinds) {
        expect(deliveryLogOf(forge).hookKinds).toContain(kind);
      }
    }
    expect(forgeOf({ kind: 'org', org: 'acme' })).toBe('github');
    expect(forgeOf({ kind: 'group', group: 'acme' })).toBe('gitlab');
  });

  it('send the API’s own headers and name the test delivery as the delivery log records it', () => {
    expect(HOOK_APIS.github.headers).toEqual({
      accept: 'application/vnd.github+json',
      'x-github-api-version': '2022-11-28',
    });
    expect(HOOK_APIS.gitlab.headers).toEqual({ accept: 'application/json' });
    expect(DeliveryLogForges.map((forge) => HOOK_APIS[forge].testEvent)).toEqual(['ping', 'push']);
  });
});

describe('asSentBy()', () => {
  const sample = { nativeName: 'issues', payload: { action: 'opened' } };

  it.each(['standard', 'svix'] as const)(
    'puts the event name in the %s sample’s type, its native name',
    (forge) => {
      expect(asSentBy(forge, 'issues.opened', sample)).toEqual({
        nativeName: 'issues.opened',
        payload: { type: 'issues.opened', action: 'opened' },
      });
    },
  );

  it('leaves a catalogue forge’s sample as it is', () => {
    expect(asSentBy('gitea', 'issues.opened', sample)).toBe(sample);
  });
});

describe('forgeSecret()', () => {
  it('makes a whsec_ key for a Standard Webhooks sender, the same for the same seed', () => {
    expect(forgeSecret('svix', 'seed')).toBe(standardSecret('seed'));
    expect(forgeSecret('standard')).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(forgeSecret('standard')).not.toBe(forgeSecret('standard'));
  });

  it('keeps the seed, or makes 64 hex digits, for any other forge', () => {
    expect(forgeSecret('gitlab', 'seed')).toBe('seed');
    expect(forgeSecret('github')).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('unknown event names', () => {
  const quiet = () => ({ warn: vi.fn(), error: vi.fn() });

  it.each(['standard', 'svix'] as const)(
    'are not warned about for the %s preset: its names are the sender’s',
    (forge) => {
      const log = quiet();
      const webhooks = new Webhooks({ secret: standardSecret('s'), forge, log });
      webhooks.on('contact.created' as never, () => undefined);
      webhooks.on('invoice' as never, () => undefined);
      expect(log.warn).not.toHaveBeenCalled();
    },
  );

  it('are still warned about for a forge that maps onto the catalogue', () => {
    const log = quiet();
    const webhooks = new Webhooks({ secret: 's', forge: 'gitlab', log });
    webhooks.on('contact.created' as never, () => undefined);
    expect(log.warn).toHaveBeenCalledWith('"contact.created" is not a known event name; check for typos');
  });

  it('follow the event handler’s eventNames option', () => {
    const log = quiet();
    createEventHandler({ log, eventNames: 'sender' }).on('contact.created' as never, () => undefined);
    expect(log.warn).not.toHaveBeenCalled();
    expect(() => createEventHandler({ eventNames: 'nobody' as never })).toThrow(
      new TypeError('"eventNames" must be "catalogue" or "sender"'),
    );
  });
});

describe('a source’s hook', () => {
  const label = (field?: string) => `"hook${field === undefined ? '' : `.${field}`}"`;

  it('takes its default api from its forge’s preset', () => {
    expect(parseSourceHook({ kind: 'group', group: 'g', id: 4, provider: 'p' }, 'gitlab', label).api).toBe(
      'https://gitlab.com/api/v4',
    );
    expect(parseSourceHook({ kind: 'app', provider: 'p' }, 'github', label).api).toBe(
      'https://api.github.com',
    );
  });
});

/** Every source file outside the preset table that compares a value with a forge's name. */
function forgeNameBranches(): string[] {
  const names = Forges.join('|');
  const pattern = new RegExp(
    `(?:===|!==)\\s*'(?:${names})'|'(?:${names})'\\s*(?:===|!==)|case '(?:${names})'`,
    'g',
  );
  const found: string[] = [];
  const visit = (folder: string) => {
    for (const name of readdirSync(join(ROOT, folder))) {
      const path = join(folder, name);
      if (name === 'generated' || name === 'node_modules') continue;
      if (statSync(join(ROOT, path)).isDirectory()) visit(path);
      else if (/\.(ts|cjs|js)$/.test(name) && path !== 'lib/webhooks/forges.ts') {
        for (const line of readFileSync(join(ROOT, path), 'utf8').split('\n')) {
          // A signature scheme is named `standard` too: that is the scheme, not the forge.
          if (pattern.test(line.replace(/scheme\s*(?:===|!==)\s*'standard'/g, '')))
            found.push(`${path}: ${line.trim()}`);
          pattern.lastIndex = 0;
        }
      }
    }
  };
  for (const folder of ['lib/webhooks', 'lib/aws', 'lib/cli', 'local-stack', 'scripts']) visit(folder);
  return found;
}

describe('forge names', () => {
  it('are tested nowhere in lib/webhooks, lib/aws, lib/cli, local-stack or scripts outside the preset table', () => {
    expect(forgeNameBranches()).toEqual([]);
  });
});
