// A subscriber is declared in two places: its EventBridge pattern in serverless.yml (or local-stack/recorder.yml)
// and the names its handler registers with `events.on(...)`. This test holds the two together for every
// subscriber: each delivery the pattern sends must be one the handler handles (a rule sending `issues.*` to code
// that handles only `issues.opened` fails), and each name the handler registers must be one the pattern can send.
// The handlers are imported for real; only the event handler they build is wrapped, to see what they register.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { readProjectYaml as readYaml } from '../../helpers/project-yaml.js';

const registered: string[][] = [];

vi.mock('../../../lib/webhooks/index.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../../lib/webhooks/index.js')>();
  return {
    ...original,
    createEventHandler: (...args: Parameters<typeof original.createEventHandler>) => {
      const handler = original.createEventHandler(...args);
      const names: string[] = [];
      registered.push(names);
      return {
        ...handler,
        on: (name: string | readonly string[], fn: never) => {
          names.push(...(typeof name === 'string' ? [name] : name));
          (handler.on as (name: string | readonly string[], fn: never) => void)(name, fn);
        },
        onAny: (fn: never) => {
          names.push('*');
          handler.onAny(fn);
        },
      };
    },
  };
});

const ROOT = new URL('../../../', import.meta.url);

interface Subscriber {
  name: string;
  /** The module of its handler, from the root (`functions/subscriber/handler`). */
  module: string;
  patterns: Record<string, unknown>[];
}

/** Every function of serverless.yml (and of a stage file it includes) with an `eventBridge` event. */
function subscribers(): Subscriber[] {
  const functions = readYaml('serverless.yml').functions as Record<string, unknown>;
  const found: Subscriber[] = [];
  for (const [name, value] of Object.entries(functions)) {
    // `${file(local-stack/recorder.yml):${sls:stage}, null}`: the local stage's function of that file.
    const included = typeof value === 'string' ? /^\$\{file\(([^)]+)\):\$\{sls:stage\}/.exec(value) : null;
    const definition = (included === null ? value : readYaml(included[1] as string).local) as {
      handler: string;
      events?: { eventBridge?: { pattern?: Record<string, unknown> } }[];
    };
    const events = Array.isArray(definition.events) ? definition.events : [];
    const patterns = events.flatMap((event) =>
      event.eventBridge?.pattern === undefined ? [] : [event.eventBridge.pattern],
    );
    if (patterns.length > 0) {
      found.push({ name, module: definition.handler.replace(/\.[^.]+$/, ''), patterns });
    }
  }
  return found;
}

/**
 * What a pattern sends, in the names a handler registers: `issues.opened` (one detail-type), `issues` (every
 * delivery of an event: a `detail-type` prefix `issues.` or `detail.event`), `*` (every delivery). A pattern this
 * cannot read is an error, so a new form is never passed unchecked.
 */
function patternSends(pattern: Record<string, unknown>): string[] {
  const detailType = pattern['detail-type'];
  const event = (pattern.detail as { event?: unknown } | undefined)?.event;
  if (detailType !== undefined) {
    if (!Array.isArray(detailType))
      throw new TypeError(`cannot read detail-type ${JSON.stringify(detailType)}`);
    return detailType.map((entry: unknown) => {
      if (typeof entry === 'string') return entry;
      const prefix = (entry as { prefix?: unknown } | null)?.prefix;
      if (typeof prefix === 'string' && /^[a-z_]+\.$/.test(prefix)) return prefix.slice(0, -1);
      throw new TypeError(`cannot read detail-type entry ${JSON.stringify(entry)}`);
    });
  }
  if (event !== undefined) {
    if (!Array.isArray(event) || !event.every((name) => typeof name === 'string')) {
      throw new TypeError(`cannot read detail.event ${JSON.stringify(event)}`);
    }
    return event;
  }
  return ['*'];
}

/** Whether a handler registered under `handled` runs for every delivery of `sent`. */
const covers = (handled: string, sent: string) =>
  handled === '*' || handled === sent || (!handled.includes('.') && sent.startsWith(`${handled}.`));

/**
 * The disagreements of a subscriber: what its patterns send that no handler takes, and what it registers that no
 * pattern sends. A subscriber that registers no name takes every delivery (it resolves and logs each one).
 */
function disagreements(patterns: readonly Record<string, unknown>[], names: readonly string[]): string[] {
  const handled = names.filter((name) => name !== 'error');
  const takes = handled.length === 0 ? ['*'] : handled;
  const sent = patterns.flatMap(patternSends);
  return [
    ...sent
      .filter((one) => !takes.some((name) => covers(name, one)))
      .map((one) => `the rule sends "${one}", which no handler takes`),
    ...handled
      .filter((name) => !sent.some((one) => covers(one, name) || covers(name, one)))
      .map((name) => `the handler takes "${name}", which no rule sends`),
  ];
}

describe('disagreements()', () => {
  const prefix = { source: ['forge.webhooks'], 'detail-type': [{ prefix: 'issues.' }] };

  it('finds a rule sending every issues action to a handler of issues.opened', () => {
    expect(disagreements([prefix], ['issues.opened'])).toEqual([
      'the rule sends "issues", which no handler takes',
    ]);
  });

  it('finds a handler no rule feeds', () => {
    expect(
      disagreements([{ source: ['x'], 'detail-type': ['issues.opened'] }], ['issues.opened', 'push']),
    ).toEqual(['the handler takes "push", which no rule sends']);
  });

  it('accepts each rule form with a handler that takes what it sends', () => {
    expect(disagreements([prefix], ['issues'])).toEqual([]);
    expect(disagreements([{ source: ['x'], detail: { event: ['issues'] } }], ['issues', 'error'])).toEqual(
      [],
    );
    expect(disagreements([{ source: ['x'], 'detail-type': ['push'] }], ['push'])).toEqual([]);
    expect(disagreements([{ source: ['x'] }], [])).toEqual([]);
    expect(disagreements([{ source: ['x'] }], ['*'])).toEqual([]);
    expect(disagreements([{ source: ['x'] }], ['issues.opened'])).toEqual([
      'the rule sends "*", which no handler takes',
    ]);
  });

  it('refuses a pattern it cannot read', () => {
    expect(() => disagreements([{ 'detail-type': [{ prefix: 'iss' }] }], [])).toThrow('cannot read');
    expect(() => disagreements([{ 'detail-type': 'push' }], [])).toThrow('cannot read');
  });
});

describe('every subscriber of serverless.yml', { timeout: 60_000 }, () => {
  const all = subscribers();

  beforeAll(() => {
    for (const [name, value] of Object.entries({
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
      FORGEBRIDGE_FORGE_API_URL: 'https://api.example.test',
      FORGEBRIDGE_TOKEN_TABLE: 'tokens',
      // The example subscriber's forge API client: built at load, never called here.
      IS_OFFLINE: 'true',
      FORGEBRIDGE_OAUTH_CLIENT_SECRET: 'bot-secret',
      FORGEBRIDGE_OAUTH_CLIENTS: JSON.stringify([
        { provider: 'forge', clientId: 'bot', site: 'http://127.0.0.1:9' },
      ]),
      FORGEBRIDGE_DELIVERIES_TABLE: '',
    })) {
      vi.stubEnv(name, value);
    }
  });
  afterAll(() => vi.unstubAllEnvs());

  it('is found, the recorder of the local stage with them', () => {
    expect(all.map(({ name }) => name)).toEqual(
      expect.arrayContaining([
        'onIssuesOpened',
        'onIssues',
        'onIssuesPrefix',
        'onPush',
        'onEverything',
        'recorder',
      ]),
    );
  });

  it.each(all.map((subscriber) => [subscriber.name, subscriber] as const))(
    '%s handles what its rule sends, and its rule sends what it handles',
    async (_name, subscriber) => {
      vi.resetModules();
      registered.length = 0;
      await import(new URL(`${subscriber.module}.ts`, ROOT).href);
      // Its handler builds one event handler at load and registers on it.
      expect(registered).toHaveLength(1);
      expect(disagreements(subscriber.patterns, registered[0] as string[])).toEqual([]);
    },
  );
});
