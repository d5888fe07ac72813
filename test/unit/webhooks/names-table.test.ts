// docs/names.md's @octokit/webhooks v7 table: every v7 name has a row, and every counterpart a row names
// exists (parsed from the table, so that the page cannot promise a name the library lacks).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as api from '../../../lib/webhooks/index.js';
import { codeSpans, markdownTable } from '../../helpers/markdown-table.js';

const rows = markdownTable('docs/names.md', '@octokit/webhooks v7 → forgebridge (`lib/webhooks`)');

/**
 * The names of @octokit/webhooks v7 an app can write, read from the type definitions of 7.0.0, 7.11.0,
 * 7.15.0, 7.21.0 and 7.24.3 (package exports, instance and event handler members, options, event and error
 * fields).
 */
const V7_NAMES = [
  'Webhooks',
  'createWebhooksApi',
  'createEventHandler',
  'createMiddleware',
  'sign',
  'verify',
  'WebhookEvent',
  'EmitterWebhookEvent',
  'WebhookEvents',
  'EventTypesPayload',
  'EmitterEventMap',
  'EmitterEventName',
  'EventNames',
  'EventPayloads',
  'WebhookError',
  "require('@octokit/webhooks/sign')",
  'webhooks.sign',
  'webhooks.verify',
  'webhooks.on',
  'webhooks.onAny',
  'webhooks.onError',
  'webhooks.removeListener',
  'webhooks.receive',
  'webhooks.verifyAndReceive',
  'webhooks.middleware',
  'createEventHandler().on',
  'createEventHandler().onAny',
  'createEventHandler().onError',
  'createEventHandler().removeListener',
  'createEventHandler().receive',
  'createMiddleware(options).on',
  'option secret',
  'option path',
  'option transform',
  'event.id',
  'event.name',
  'event.payload',
  'error.errors',
  'Array.from(error)',
  'error.event',
];

/** Every name `lib/webhooks/index.ts` exports, as written in its export lists, and whether it is a type only. */
function exportedNames(): Map<string, 'type' | 'value'> {
  const source = readFileSync(join(import.meta.dirname, '../../../lib/webhooks/index.ts'), 'utf8');
  const names = new Map<string, 'type' | 'value'>();
  for (const [, typeOnly, list] of source.matchAll(/export (type )?\{([^}]*)\}/g)) {
    for (const entry of (list as string).split(',')) {
      const trimmed = entry.trim();
      const name = trimmed
        .replace(/^type\s+/, '')
        .split(/\s+as\s+/)
        .pop();
      if (name) names.set(name, typeOnly !== undefined || trimmed.startsWith('type ') ? 'type' : 'value');
    }
  }
  return names;
}

async function receiveError(): Promise<api.WebhookReceiveError> {
  const webhooks = new api.Webhooks({ secret: 's' });
  webhooks.on('issues', () => {
    throw new Error('handler failed');
  });
  return webhooks.receive({ id: 'd-1', name: 'issues', payload: {} }).then(
    () => {
      throw new Error('receive resolved');
    },
    (error: api.WebhookReceiveError) => error,
  );
}

async function receivedEvent(): Promise<Record<string, unknown>> {
  const webhooks = new api.Webhooks({ secret: 's' });
  let seen: Record<string, unknown> = {};
  webhooks.onAny((event) => {
    seen = event as unknown as Record<string, unknown>;
  });
  await webhooks.receive({ id: 'd-1', name: 'issues', payload: { action: 'opened' } });
  return seen;
}

type Check = (captured: string) => boolean | Promise<boolean>;

/** The forms the page explains, each with how to check that a name in it exists. */
const FORMS: [RegExp, Check][] = [
  [
    /^(\w+)$/,
    (name) => {
      const kind = exportedNames().get(name);
      // A value export must be there at run time too; a type-only export has nothing to look at.
      return kind === 'type' || (kind === 'value' && (api as Record<string, unknown>)[name] !== undefined);
    },
  ],
  [
    /^webhooks\.(\w+)$/,
    (member) =>
      typeof (new api.Webhooks({ secret: 's' }) as unknown as Record<string, unknown>)[member] === 'function',
  ],
  [
    /^createEventHandler\(\)\.(\w+)$/,
    (member) => typeof (api.createEventHandler() as Record<string, unknown>)[member] === 'function',
  ],
  [
    /^options\.(\w+)$/,
    (option) => {
      try {
        new api.Webhooks({ secret: 's', ...(option === 'secret' ? {} : { [option]: undefined }) } as never);
        return true;
      } catch {
        return false;
      }
    },
  ],
  [/^receiveError\.(\w+)$/, async (member) => (await receiveError())[member as 'errors'] !== undefined],
  [
    /^Array\.from\((receiveError)\)$/,
    async () => {
      const error = await receiveError();
      return Array.from(error).length === 1 && Array.from(error)[0] === error.errors[0];
    },
  ],
  [/^event\.(\w+)$/, async (field) => (await receivedEvent())[field] !== undefined],
  [/^forge: '(\w+)'$/, (forge) => (api.Forges as readonly string[]).includes(forge)],
  [/^'(\w+)'$/, (event) => api.isKnownEventName(event)],
];

/** Whether the counterpart `name`, written in one of the forms the page explains, exists. */
async function exists(name: string): Promise<boolean> {
  for (const [form, check] of FORMS) {
    const match = name.match(form);
    if (match !== null) return check(match[1] as string);
  }
  throw new Error(`"${name}" is in no form the page explains`);
}

describe('docs/names.md: @octokit/webhooks v7 → forgebridge', () => {
  it('has a row for every v7 name', () => {
    const written = rows.flatMap(([octokit]) => codeSpans(octokit ?? ''));
    const named = (name: string) =>
      written.some((span) => span === name || span.startsWith(`${name}(`) || span.startsWith(`${name} `)) ||
      rows.some(([octokit]) => octokit?.startsWith(name.replace(/ (\w+)$/, ' `$1`')));
    expect(V7_NAMES.filter((name) => !named(name))).toEqual([]);
  });

  it.each(rows.map((row) => [row[0], row[1], row[2]] as const))('%s → %s', async (_octokit, ours, notes) => {
    expect(ours).toBeDefined();
    if (ours === '—') {
      expect(notes?.length ?? 0, 'a row without a counterpart says why').toBeGreaterThan(20);
      return;
    }
    const [name] = codeSpans(ours ?? '');
    expect(name, 'the counterpart is written as code').toBeDefined();
    expect(await exists(name as string), `${name} exists`).toBe(true);
  });

  it('the checker can fail: names the library does not have are refused', async () => {
    expect(await exists('createWebhooksApi')).toBe(false);
    expect(await exists('EmitterEventMap')).toBe(false);
    expect(await exists('webhooks.onEvent')).toBe(false);
    expect(await exists('createEventHandler().middleware')).toBe(false);
    expect(await exists('options.additionalSecrets')).toBe(false);
    expect(await exists('receiveError.status2')).toBe(false);
    expect(await exists('event.signature')).toBe(false);
    expect(await exists("forge: 'sourcehut'")).toBe(false);
    expect(await exists("'github_app_authorisation'")).toBe(false);
  });
});
