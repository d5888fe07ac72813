// Which of the stack's EventBridge rules a logged delivery matched. The log keeps what the delivery routed as
// (event, action, forge, source), not the event the ingest put on the bus, so the inspector rebuilds that event's
// routing fields the way the ingest writes them (source `forge.webhooks`, detail-type `event.action`, detail
// `{ event, action, forge, source }`) and tests it against each function's `eventBridge` pattern in
// serverless.yml, read once when the inspector starts. The matcher covers the pattern forms EventBridge documents
// for strings (exact values, `prefix`, `suffix`, `anything-but`, `exists`), which is every form serverless.yml uses.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { AwsDefaults, DEFAULT_SOURCE } from '../aws/core/index.js';
import type { DeliveryRecord } from '../aws/index.js';

/** One subscriber rule: the function it invokes and its event pattern. */
export interface InspectorRule {
  /** The function key in serverless.yml (`onIssuesOpened`). */
  name: string;
  pattern: Record<string, unknown>;
}

interface JsYaml {
  Type: new (
    tag: string,
    options: { kind: 'scalar' | 'sequence' | 'mapping'; construct: (data: unknown) => unknown },
  ) => unknown;
  DEFAULT_SCHEMA: { extend(types: unknown[]): unknown };
  load(text: string, options: { schema: unknown }): unknown;
}

/** The serverless variable a pattern names the bus source with, and what it resolves to offline. */
// biome-ignore lint/suspicious/noTemplateCurlyInString: a serverless variable, read as written in the yml
const SOURCE_VARIABLE = '${self:custom.forgebridge.source}';

function resolveVariables(value: unknown, source: string): unknown {
  if (typeof value === 'string') return value === SOURCE_VARIABLE ? source : value;
  if (Array.isArray(value)) return value.map((item) => resolveVariables(item, source));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, resolveVariables(item, source)]),
    );
  }
  return value;
}

/** Every `eventBridge` pattern of serverless.yml's functions, in file order. */
export function loadRules(
  file = new URL('../../serverless.yml', import.meta.url),
  source = process.env.FORGEBRIDGE_SOURCE || AwsDefaults.source,
): InspectorRule[] {
  // js-yaml comes with osls; CloudFormation's short tags (`!GetAtt Bus.Name`) are read as plain values.
  const yaml = createRequire(import.meta.url)('js-yaml') as JsYaml;
  const tags = ['!Ref', '!GetAtt', '!Sub', '!Join', '!Select', '!If', '!Equals', '!Split'].flatMap((tag) =>
    (['scalar', 'sequence', 'mapping'] as const).map(
      (kind) => new yaml.Type(tag, { kind, construct: (data) => data }),
    ),
  );
  const document = yaml.load(readFileSync(file, 'utf8'), { schema: yaml.DEFAULT_SCHEMA.extend(tags) }) as {
    functions?: Record<string, { events?: { eventBridge?: { pattern?: Record<string, unknown> } }[] } | null>;
  };
  const rules: InspectorRule[] = [];
  for (const [name, definition] of Object.entries(document.functions ?? {})) {
    if (typeof definition !== 'object' || definition === null) continue;
    for (const event of definition.events ?? []) {
      const pattern = event?.eventBridge?.pattern;
      if (pattern !== undefined) {
        rules.push({ name, pattern: resolveVariables(pattern, source) as Record<string, unknown> });
      }
    }
  }
  return rules;
}

/** Whether one value matches one element of a pattern's array. */
function matchesElement(element: unknown, value: unknown): boolean {
  if (typeof element !== 'object' || element === null) return value === element;
  const filter = element as Record<string, unknown>;
  if ('exists' in filter) return (value !== undefined) === filter.exists;
  if (value === undefined) return false;
  if (typeof filter.prefix === 'string') return typeof value === 'string' && value.startsWith(filter.prefix);
  if (typeof filter.suffix === 'string') return typeof value === 'string' && value.endsWith(filter.suffix);
  if ('anything-but' in filter) {
    const excluded = filter['anything-but'];
    return Array.isArray(excluded) ? !excluded.includes(value) : !matchesElement(excluded, value);
  }
  return false;
}

/** Whether an event matches an EventBridge pattern (every field named must match; arrays are "any of"). */
export function matchesPattern(pattern: Record<string, unknown>, event: Record<string, unknown>): boolean {
  return Object.entries(pattern).every(([key, expected]) => {
    const value = event[key];
    if (Array.isArray(expected)) return expected.some((element) => matchesElement(element, value));
    if (typeof expected === 'object' && expected !== null) {
      return (
        typeof value === 'object' &&
        value !== null &&
        matchesPattern(expected as Record<string, unknown>, value as Record<string, unknown>)
      );
    }
    return false;
  });
}

/**
 * The rules a record's delivery matched: none unless this request put it on the bus (`published`, or `queued`
 * for the retrier to publish); a duplicate or a rejected request published nothing.
 */
export function matchedRules(
  rules: readonly InspectorRule[],
  record: Pick<DeliveryRecord, 'event' | 'action' | 'forge' | 'source' | 'outcome'>,
  source = process.env.FORGEBRIDGE_SOURCE || AwsDefaults.source,
): string[] {
  if ((record.outcome !== 'published' && record.outcome !== 'queued') || record.event === undefined)
    return [];
  const detail: Record<string, unknown> = { event: record.event };
  if (record.action !== undefined) detail.action = record.action;
  if (record.forge !== undefined) detail.forge = record.forge;
  detail.source = record.source ?? DEFAULT_SOURCE;
  const event = {
    source,
    'detail-type': record.action === undefined ? record.event : `${record.event}.${record.action}`,
    detail,
  };
  return [...new Set(rules.filter((rule) => matchesPattern(rule.pattern, event)).map((rule) => rule.name))];
}
