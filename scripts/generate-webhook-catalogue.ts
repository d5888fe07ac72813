/**
 * Generates the webhook event catalogue and its payload types into `lib/webhooks/generated/` from the forge's
 * own webhooks OpenAPI description, shipped in the dev dependency `@octokit/openapi-webhooks`
 * (`generated/api.github.com.json`, its `webhooks` section: one operation per event or `event.action`).
 *
 * Usage:
 * - `npm run generate` (or `npx tsx scripts/generate-webhook-catalogue.ts`) writes the files.
 * - `--check` writes nothing and exits 1 when a committed file differs from what would be written, is missing,
 *   or is not produced any more (CI runs it through `npm test`).
 * - `--out <dir>` writes to (or checks) another directory; `--source <file>` reads another description.
 *
 * Rules applied here (see docs/webhooks-catalogue.md):
 * - Names are neutral: the platform's name in an event name becomes `forge`
 *   (`github_app_authorization` -> `forge_app_authorization`); the forge's spelling is kept as an alias.
 * - Events and actions that the interface spec lists but the forge no longer sends stay in the catalogue:
 *   they are the hand-maintained `SPEC_ONLY` list below, each with the reason it is kept.
 * - An event whose `action` schema is a free string (`repository_dispatch`: the sender's `event_type`) has no
 *   fixed actions: its example action in the description is dropped and any `event.<anything>` is accepted.
 * - The output is sorted and byte-for-byte deterministic.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

// ---------------------------------------------------------------------------------------------------------
// Hand-maintained inputs

/** Where the description comes from. */
const SOURCE_PACKAGE = '@octokit/openapi-webhooks';
const SOURCE_FILE = 'generated/api.github.com.json';

/** The platform's name, as it appears in event names; replaced by {@link NEUTRAL_WORD}. */
const PLATFORM_WORD = 'github';
const NEUTRAL_WORD = 'forge';

/** The common payload fields that are typed; every other field stays open (`unknown`). */
const COMMON_FIELDS = {
  sender: {
    typeName: 'ForgeUser',
    doc: 'A user account, as the forge sends it in `sender`, `owner` and similar fields.',
    fields: [
      'login',
      'id',
      'node_id',
      'type',
      'site_admin',
      'name',
      'email',
      'avatar_url',
      'html_url',
      'url',
    ],
  },
  repository: {
    typeName: 'ForgeRepository',
    doc: 'The repository an event happened in (`repository`).',
    fields: [
      'id',
      'node_id',
      'name',
      'full_name',
      'owner',
      'private',
      'visibility',
      'fork',
      'archived',
      'description',
      'default_branch',
      'html_url',
      'url',
      'created_at',
      'updated_at',
      'pushed_at',
    ],
  },
  organization: {
    typeName: 'ForgeOrganization',
    doc: 'The organization an event happened in (`organization`), when there is one.',
    fields: ['login', 'id', 'node_id', 'description', 'avatar_url', 'url'],
  },
  installation: {
    typeName: 'ForgeInstallation',
    doc: 'The app installation a delivery was sent for (`installation`), when an app receives it.',
    fields: ['id', 'node_id'],
  },
} as const;

type CommonField = keyof typeof COMMON_FIELDS;
const COMMON_FIELD_NAMES = Object.keys(COMMON_FIELDS).sort() as CommonField[];

/** Nested fields of a common object that are themselves a common type. */
const NESTED_COMMON: Record<string, string> = { owner: 'ForgeUser' };

interface SpecOnlyEntry {
  /** Neutral event name. */
  readonly event: string;
  /** Actions the spec lists that the forge does not describe (empty: an event without actions). */
  readonly actions: readonly string[];
  /**
   * Common fields of the payload (true: always present, false: optional), for an event the forge lacks
   * entirely. A spec-only action of a known event takes the fields of the event's first known action.
   */
  readonly fields?: Partial<Record<CommonField, boolean>>;
  /** Why it is kept (written into the generated catalogue and the docs). */
  readonly reason: string;
}

/**
 * Events and actions of the interface spec's table that the forge's current description lacks.
 * They stay in the catalogue so that code written against the spec keeps compiling and dispatching.
 * The generator fails when one of them reappears in the description, so this list never hides a real entry.
 */
const SPEC_ONLY: readonly SpecOnlyEntry[] = [
  {
    event: 'content_reference',
    actions: ['created'],
    fields: { installation: true, repository: true, sender: true },
    reason: 'content attachments were retired by the forge; the spec still lists the event',
  },
  {
    event: 'pull_request',
    actions: ['merged'],
    reason: 'the forge reports a merge as `closed` with `pull_request.merged: true`; the spec lists `merged`',
  },
  {
    event: 'repository_dispatch',
    actions: ['on-demand-test'],
    reason: 'actions are free-form (the `event_type` of the dispatch); the spec names this one',
  },
  {
    event: 'security_advisory',
    actions: ['performed'],
    reason: 'the forge no longer sends `performed`; the spec lists it',
  },
];

// ---------------------------------------------------------------------------------------------------------
// Reading the description

interface Schema {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  nullable?: boolean;
  properties?: Record<string, Schema>;
  required?: string[];
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  description?: string;
  title?: string;
}

interface Operation {
  operationId: string;
  summary?: string;
  description?: string;
  requestBody: { content: { 'application/json': { schema: Schema } } };
}

interface Description {
  webhooks: Record<string, { post: Operation }>;
  components: { schemas: Record<string, Schema> };
}

/** One `event.action` (or one event without actions) as found in the description. */
interface Entry {
  event: string;
  /** `undefined` for an event without actions. */
  action: string | undefined;
  /** `true` when the action is a free string (no enum). */
  freeForm: boolean;
  /** What this operation is (`An issue was created.`). */
  description: string;
  /** What the event is (`This event occurs when ...`). */
  summary: string;
  fields: Map<CommonField, { required: boolean; nullable: boolean }>;
}

/**
 * Everything the generator writes, by file name (relative to the output directory).
 */
export type GeneratedFiles = Map<string, string>;

const scriptDir = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(scriptDir, '..');

/**
 * Default output directory.
 */
export const defaultOutDir = join(repoRoot, 'lib/webhooks/generated');

function sourcePackageDir(): string {
  const require = createRequire(import.meta.url);
  try {
    return dirname(require.resolve(`${SOURCE_PACKAGE}/package.json`));
  } catch {
    return join(repoRoot, 'node_modules', SOURCE_PACKAGE);
  }
}

/**
 * The source description's path and the package version that goes into the DO-NOT-EDIT line.
 */
export function defaultSource(): { file: string; version: string } {
  const dir = sourcePackageDir();
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string };
  return { file: join(dir, SOURCE_FILE), version: pkg.version };
}

function refName(ref: string): string {
  const prefix = '#/components/schemas/';
  if (!ref.startsWith(prefix)) throw new Error(`unsupported $ref "${ref}"`);
  return ref.slice(prefix.length);
}

class Resolver {
  constructor(private readonly description: Description) {}

  deref(schema: Schema): Schema {
    let current = schema;
    for (let depth = 0; current.$ref !== undefined; depth++) {
      if (depth > 20) throw new Error(`$ref cycle at "${schema.$ref}"`);
      const target = this.description.components.schemas[refName(current.$ref)];
      if (target === undefined) throw new Error(`unknown schema "${current.$ref}"`);
      current = target;
    }
    return current;
  }

  /** Whether a schema admits `null`. */
  nullable(schema: Schema): boolean {
    const s = this.deref(schema);
    if (s.nullable === true) return true;
    if (Array.isArray(s.type) ? s.type.includes('null') : s.type === 'null') return true;
    return [...(s.anyOf ?? []), ...(s.oneOf ?? [])].some((member) => this.nullable(member));
  }

  /** The object schemas a (possibly nullable, possibly composed) schema stands for. */
  objects(schema: Schema): Schema[] {
    const s = this.deref(schema);
    const members = [...(s.anyOf ?? []), ...(s.oneOf ?? [])];
    if (members.length > 0) return members.flatMap((member) => this.objects(member));
    if (s.allOf !== undefined) {
      const parts = s.allOf.flatMap((member) => this.objects(member));
      return [
        {
          properties: Object.assign({}, ...parts.map((p) => p.properties ?? {})),
          required: parts.flatMap((p) => p.required ?? []),
        },
      ];
    }
    return s.properties !== undefined ? [s] : [];
  }

  /** A TypeScript type for a leaf field of a common object. */
  tsType(schema: Schema): string[] {
    const s = this.deref(schema);
    const members = [...(s.anyOf ?? []), ...(s.oneOf ?? [])];
    if (members.length > 0) return members.flatMap((member) => this.tsType(member));
    if (s.enum !== undefined) {
      const literals = s.enum.map((value) => (value === null ? 'null' : JSON.stringify(value)));
      return s.nullable === true ? [...literals, 'null'] : literals;
    }
    const types = Array.isArray(s.type) ? s.type : s.type === undefined ? [] : [s.type];
    if (types.length === 0) return ['unknown'];
    const out = types.map((type) => {
      switch (type) {
        case 'string':
          return 'string';
        case 'integer':
        case 'number':
          return 'number';
        case 'boolean':
          return 'boolean';
        case 'null':
          return 'null';
        case 'array':
          return 'unknown[]';
        default:
          return 'Record<string, unknown>';
      }
    });
    return s.nullable === true ? [...out, 'null'] : out;
  }
}

/**
 * The PascalCase of an event or action name, for type and constant names.
 */
export function pascalCase(name: string): string {
  return name
    .split(/[^A-Za-z0-9]+/)
    .filter((part) => part.length > 0)
    .map((part) => part[0]!.toUpperCase() + part.slice(1))
    .join('');
}

/**
 * The neutral spelling of a forge event name: the platform name becomes `forge`.
 */
export function neutralName(name: string): string {
  return name.replaceAll(PLATFORM_WORD, NEUTRAL_WORD);
}

function firstSentence(text: string | undefined): string {
  if (text === undefined) return '';
  const flat = text.replace(/\s+/g, ' ').trim();
  const end = flat.search(/\.(\s|$)/);
  const sentence = end === -1 ? flat : flat.slice(0, end + 1);
  return sentence
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replaceAll('*/', '*\\/')
    .replace(/\b(a|A|the|The) GitHub\b/g, '$1 forge')
    .replace(/\bGitHub\b/g, 'the forge');
}

function readEntries(description: Description, resolver: Resolver): Entry[] {
  const entries: Entry[] = [];
  for (const key of Object.keys(description.webhooks).sort()) {
    const operation = description.webhooks[key]!.post;
    const [rawEvent, rawAction] = operation.operationId.split('/') as [string, string | undefined];
    const event = neutralName(rawEvent.replaceAll('-', '_'));
    const roots = resolver.objects(operation.requestBody.content['application/json'].schema);
    if (roots.length === 0) throw new Error(`webhook "${key}" has no object payload schema`);

    const actionSchemas = roots.map((root) => root.properties?.action).filter((s) => s !== undefined);
    let action: string | undefined;
    let freeForm = false;
    if (actionSchemas.length > 0) {
      const values = new Set(actionSchemas.flatMap((s) => resolver.deref(s).enum ?? []));
      if (values.size === 0) freeForm = true;
      else if (values.size === 1) action = String([...values][0]);
      else throw new Error(`webhook "${key}" has several actions: ${[...values].join(', ')}`);
    } else if (rawAction !== undefined) {
      action = rawAction.replaceAll('-', '_');
    }

    const fields = new Map<CommonField, { required: boolean; nullable: boolean }>();
    for (const field of COMMON_FIELD_NAMES) {
      const present = roots.filter((root) => root.properties?.[field] !== undefined);
      if (present.length === 0) continue;
      fields.set(field, {
        required: roots.every((root) => root.required?.includes(field) === true),
        nullable: present.some((root) => resolver.nullable(root.properties![field]!)),
      });
    }
    entries.push({
      event,
      action,
      freeForm,
      description: firstSentence(operation.description) || firstSentence(operation.summary),
      summary: firstSentence(operation.summary) || firstSentence(operation.description),
      fields,
    });
  }
  return entries;
}

interface CommonFieldType {
  name: string;
  tsTypes: string[];
  required: boolean;
}

/** Merges every shape a common field takes across all payloads into one typed subset. */
function commonFieldTypes(
  description: Description,
  resolver: Resolver,
  field: CommonField,
): CommonFieldType[] {
  const shapes: Schema[] = [];
  for (const { post } of Object.values(description.webhooks)) {
    for (const root of resolver.objects(post.requestBody.content['application/json'].schema)) {
      const property = root.properties?.[field];
      if (property !== undefined) shapes.push(...resolver.objects(property));
    }
  }
  if (shapes.length === 0) throw new Error(`no payload has a "${field}" field`);
  return COMMON_FIELDS[field].fields.map((name) => {
    const types = new Set<string>();
    let required = true;
    let seen = false;
    for (const shape of shapes) {
      const property = shape.properties?.[name];
      if (property === undefined) {
        required = false;
        continue;
      }
      seen = true;
      if (shape.required?.includes(name) !== true) required = false;
      const nested = NESTED_COMMON[name];
      if (nested !== undefined) {
        types.add(nested);
        if (resolver.nullable(property)) types.add('null');
      } else {
        for (const type of resolver.tsType(property)) types.add(type);
      }
    }
    if (!seen) throw new Error(`no "${field}" schema has a "${name}" field: update COMMON_FIELDS`);
    // A plain `string` absorbs string literals: keep the union readable.
    if (types.has('string')) for (const t of types) if (t.startsWith('"')) types.delete(t);
    const ordered = [...types].sort((a, b) => (a === 'null' ? 1 : b === 'null' ? -1 : a.localeCompare(b)));
    return { name, tsTypes: ordered.includes('unknown') ? ['unknown'] : ordered, required };
  });
}

// ---------------------------------------------------------------------------------------------------------
// The catalogue model

interface EventModel {
  name: string;
  /** Forge spelling when it differs from the neutral name. */
  forgeName: string | undefined;
  freeForm: boolean;
  description: string;
  actions: ActionModel[];
  /** For an event without actions: its common fields. */
  fields: Map<CommonField, { required: boolean; nullable: boolean }>;
}

interface ActionModel {
  name: string;
  description: string;
  specOnly: boolean;
  fields: Map<CommonField, { required: boolean; nullable: boolean }>;
}

function buildModel(entries: Entry[], rawNames: Map<string, string>): EventModel[] {
  const events = new Map<string, EventModel>();
  for (const entry of entries) {
    let model = events.get(entry.event);
    if (model === undefined) {
      const forgeName = rawNames.get(entry.event);
      model = {
        name: entry.event,
        forgeName: forgeName !== entry.event ? forgeName : undefined,
        freeForm: false,
        description: '',
        actions: [],
        fields: new Map(),
      };
      events.set(entry.event, model);
    }
    if (model.description === '') model.description = entry.summary;
    if (entry.freeForm) {
      model.freeForm = true;
      model.fields = entry.fields;
    } else if (entry.action === undefined) {
      model.fields = entry.fields;
    } else {
      if (model.actions.some((a) => a.name === entry.action)) {
        throw new Error(`duplicate action "${entry.event}.${entry.action}"`);
      }
      model.actions.push({
        name: entry.action,
        description: entry.description,
        specOnly: false,
        fields: entry.fields,
      });
    }
  }

  for (const spec of SPEC_ONLY) {
    let model = events.get(spec.event);
    let fields = new Map<CommonField, { required: boolean; nullable: boolean }>();
    for (const field of COMMON_FIELD_NAMES) {
      const required = spec.fields?.[field];
      if (required !== undefined) fields.set(field, { required, nullable: false });
    }
    if (model !== undefined) {
      // An entry with `fields` stands for a whole event the forge lacked; it is back now.
      if (spec.fields !== undefined || spec.actions.length === 0) {
        throw new Error(
          `spec-only event "${spec.event}" is in the forge's description: remove it from SPEC_ONLY`,
        );
      }
      fields = model.freeForm ? model.fields : (model.actions[0]?.fields ?? model.fields);
    }
    if (model === undefined) {
      model = {
        name: spec.event,
        forgeName: undefined,
        freeForm: false,
        description: `Kept from the interface spec: ${spec.reason}.`,
        actions: [],
        fields,
      };
      events.set(spec.event, model);
    }
    for (const action of spec.actions) {
      if (model.actions.some((a) => a.name === action)) {
        throw new Error(
          `spec-only action "${spec.event}.${action}" is in the forge's description: remove it from SPEC_ONLY`,
        );
      }
      model.actions.push({
        name: action,
        description: `Kept from the interface spec: ${spec.reason}.`,
        specOnly: true,
        fields,
      });
    }
  }

  const sorted = [...events.values()].sort((a, b) => compare(a.name, b.name));
  for (const model of sorted) model.actions.sort((a, b) => compare(a.name, b.name));
  return sorted;
}

/** Code-point order, independent of the locale. */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

// ---------------------------------------------------------------------------------------------------------
// Writing

function header(version: string): string {
  return `// DO NOT EDIT: generated by scripts/generate-webhook-catalogue.ts from ${SOURCE_PACKAGE}@${version}\n`;
}

const q = (value: string): string => `'${value.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;

function eventTypeName(event: string): string {
  return `WebhookPayload${pascalCase(event)}`;
}

function actionTypeName(event: string, action: string): string {
  return `WebhookPayload${pascalCase(event)}${pascalCase(action)}`;
}

function emitCatalogue(events: EventModel[], version: string): string {
  const lines: string[] = [header(version)];
  lines.push(
    '/** Where this catalogue was generated from. */',
    'export const catalogueSource = {',
    `  package: ${q(SOURCE_PACKAGE)},`,
    `  version: ${q(version)},`,
    `  file: ${q(SOURCE_FILE)},`,
    '} as const;',
    '',
    '/**',
    ' * Every known event with its actions (an empty list: an event without actions), sorted by name.',
    ' * Names are neutral: the platform name in an event name is written `forge`.',
    ' */',
    'export const eventActions = {',
  );
  for (const event of events) {
    const actions = event.actions.map((a) => q(a.name)).join(', ');
    const line = `  ${event.name}: [${actions}],`;
    if (line.length <= 110) lines.push(line);
    else {
      lines.push(`  ${event.name}: [`);
      for (const a of event.actions) lines.push(`    ${q(a.name)},`);
      lines.push('  ],');
    }
  }
  lines.push('} as const;', '');
  const freeForm = events.filter((e) => e.freeForm).map((e) => q(e.name));
  lines.push(
    '/** Events whose action is free-form (any `event.<anything>` is a valid name). */',
    `export const freeFormActionEvents = [${freeForm.join(', ')}] as const;`,
    '',
    "/** The forge's own spelling of events that have a neutral name here: forge name -> neutral name. */",
    'export const forgeEventNameAliases = {',
  );
  for (const event of events) {
    if (event.forgeName !== undefined) lines.push(`  ${event.forgeName}: ${q(event.name)},`);
  }
  lines.push('} as const;', '');
  lines.push(
    "/** Entries kept from the interface spec that the forge's description no longer has, with the reason. */",
    'export const specOnlyEntries = [',
  );
  for (const spec of SPEC_ONLY) {
    lines.push(
      `  { event: ${q(spec.event)}, actions: [${spec.actions.map(q).join(', ')}], reason: ${q(spec.reason)} },`,
    );
  }
  lines.push('] as const;', '');
  return lines.join('\n');
}

function emitEventNames(events: EventModel[], version: string): string {
  const all: string[] = [];
  for (const event of events) {
    all.push(event.name);
    for (const action of event.actions) all.push(`${event.name}.${action.name}`);
  }
  const lines: string[] = [header(version)];
  lines.push(
    '/**',
    ' * Every known webhook event name as constants: `All` (every event and every `event.action`), `StringNames`',
    ' * (the plain event names) and one object per event with actions (`CheckRunEvent.Completed` is',
    " * `'check_run.completed'`). Each constant has a same-named type: the union of its values.",
    ' *',
    ' * @example',
    " * webhooks.on(EventNames.CheckRunEvent.Completed, handler); // 'check_run.completed'",
    ' * @see https://docs.github.com/webhooks/webhook-events-and-payloads',
    ' */',
    'export const EventNames = {',
    '  /** Every event name and every `event.action` name, sorted. */',
    '  All: [',
  );
  for (const name of all) lines.push(`    ${q(name)},`);
  lines.push('  ],', '  /** The plain event names, sorted. */', '  StringNames: [');
  for (const event of events) lines.push(`    ${q(event.name)},`);
  lines.push('  ],');
  for (const event of events) {
    if (event.actions.length === 0) continue;
    lines.push(`  /** The \`${event.name}.<action>\` names. */`, `  ${pascalCase(event.name)}Event: {`);
    for (const action of event.actions) {
      lines.push(`    ${pascalCase(action.name)}: ${q(`${event.name}.${action.name}`)},`);
    }
    lines.push('  },');
  }
  lines.push('} as const;', '');
  lines.push(
    "/** The types of {@link EventNames}: each is the union of the same-named constant's values. */",
    'export declare namespace EventNames {',
    '  /** Every event name and every `event.action` name. */',
    '  type All = (typeof EventNames.All)[number];',
    '  /** The plain event names. */',
    '  type StringNames = (typeof EventNames.StringNames)[number];',
  );
  for (const event of events) {
    if (event.actions.length === 0) continue;
    const name = `${pascalCase(event.name)}Event`;
    lines.push(`  /** The \`${event.name}.<action>\` names. */`);
    lines.push(`  type ${name} = (typeof EventNames.${name})[keyof typeof EventNames.${name}];`);
  }
  lines.push('}', '');
  return lines.join('\n');
}

function emitFields(
  lines: string[],
  fields: Map<CommonField, { required: boolean; nullable: boolean }>,
): void {
  for (const field of COMMON_FIELD_NAMES) {
    const info = fields.get(field);
    if (info === undefined) continue;
    const type = COMMON_FIELDS[field].typeName + (info.nullable ? ' | null' : '');
    lines.push(`  ${field}${info.required ? '' : '?'}: ${type};`);
  }
}

function emitPayloads(
  events: EventModel[],
  commonTypes: Map<CommonField, CommonFieldType[]>,
  version: string,
): string {
  const lines: string[] = [header(version)];
  lines.push(
    '// Payload types: the common fields (action, sender, repository, organization, installation) are typed, a',
    '// typed subset of each; every other field is left open (`unknown`). One interface per `event.action`, and',
    '// per event the union of its actions.',
    '',
    '/** The open part of every payload: fields not typed here are `unknown`. */',
    'export interface OpenPayload {',
    '  [field: string]: unknown;',
    '}',
    '',
  );
  for (const field of COMMON_FIELD_NAMES) {
    const { typeName, doc } = COMMON_FIELDS[field];
    lines.push(`/** ${doc} A typed subset; other fields are open. */`, `export interface ${typeName} {`);
    for (const f of commonTypes.get(field)!) {
      lines.push(`  ${f.name}${f.required ? '' : '?'}: ${f.tsTypes.join(' | ')};`);
    }
    lines.push('  [field: string]: unknown;', '}', '');
  }

  const names = new Set<string>();
  const claim = (name: string): string => {
    if (names.has(name)) throw new Error(`type name collision: "${name}"`);
    names.add(name);
    return name;
  };

  for (const event of events) {
    const eventType = claim(eventTypeName(event.name));
    const doc = event.description ? ` ${event.description}` : '';
    if (event.actions.length === 0 || event.freeForm) {
      lines.push(
        `/** Payload of \`${event.name}\`.${doc} */`,
        `export interface ${eventType} extends OpenPayload {`,
      );
      if (event.freeForm) lines.push('  action: string;');
      emitFields(lines, event.fields);
      lines.push('}', '');
    }
    const actionTypes: string[] = [];
    for (const action of event.actions) {
      const name = claim(actionTypeName(event.name, action.name));
      actionTypes.push(name);
      const actionDoc = action.description ? ` ${action.description}` : '';
      lines.push(
        `/** Payload of \`${event.name}.${action.name}\`.${actionDoc} */`,
        `export interface ${name} extends OpenPayload {`,
        `  action: ${q(action.name)};`,
      );
      emitFields(lines, action.fields);
      lines.push('}', '');
    }
    if (event.actions.length > 0 && !event.freeForm) {
      lines.push(`/** Payload of \`${event.name}\` (any action).${doc} */`, `export type ${eventType} =`);
      actionTypes.forEach((name, i) => {
        lines.push(`  | ${name}${i === actionTypes.length - 1 ? ';' : ''}`);
      });
      lines.push('');
    }
  }
  return lines.join('\n');
}

function emitPayloadMaps(events: EventModel[], version: string): string {
  const lines: string[] = [header(version)];
  lines.push("import type * as P from './payloads.js';", '');
  lines.push(
    '/** Plain event name -> payload type (for an event with actions: the union of its actions). */',
    'export interface EventPayloadMap {',
  );
  for (const event of events) lines.push(`  ${event.name}: P.${eventTypeName(event.name)};`);
  lines.push('}', '');
  lines.push(
    '/** `event.action` name -> payload type narrowed to that action. */',
    'export interface ActionPayloadMap {',
  );
  for (const event of events) {
    for (const action of event.actions) {
      lines.push(`  ${q(`${event.name}.${action.name}`)}: P.${actionTypeName(event.name, action.name)};`);
    }
  }
  lines.push('}', '');
  return lines.join('\n');
}

function fieldsLiteral(fields: Map<CommonField, { required: boolean; nullable: boolean }>): string {
  const parts: string[] = [];
  for (const field of COMMON_FIELD_NAMES) {
    const info = fields.get(field);
    if (info === undefined) continue;
    parts.push(`${field}: '${info.required ? 'required' : 'optional'}${info.nullable ? '-nullable' : ''}'`);
  }
  return `{ ${parts.join(', ')} }`;
}

function emitPayloadShapes(
  events: EventModel[],
  commonTypes: Map<CommonField, CommonFieldType[]>,
  version: string,
): string {
  const lines: string[] = [header(version)];
  lines.push(
    '// The typed part of payloads.ts as data, for tests that check real payloads against the types.',
    '// Not imported by the library at run time.',
    '',
    '/** Typed fields of the common objects: field -> whether it is always present, and its types. */',
    'export const commonObjectShapes = {',
  );
  for (const field of COMMON_FIELD_NAMES) {
    lines.push(`  ${COMMON_FIELDS[field].typeName}: {`);
    for (const f of commonTypes.get(field)!) {
      lines.push(
        `    ${f.name}: { required: ${f.required}, types: [${f.tsTypes.map((t) => q(t)).join(', ')}] },`,
      );
    }
    lines.push('  },');
  }
  lines.push('} as const;', '');
  lines.push(
    '/** Common object of each common payload field. */',
    'export const commonFieldTypes = {',
    ...COMMON_FIELD_NAMES.map((field) => `  ${field}: ${q(COMMON_FIELDS[field].typeName)},`),
    '} as const;',
    '',
    '/** Payload name (plain event without fixed actions, or `event.action`) -> its typed common fields. */',
    'export const payloadShapes = {',
  );
  for (const event of events) {
    if (event.actions.length === 0 || event.freeForm) {
      lines.push(`  ${q(event.name)}: ${fieldsLiteral(event.fields)},`);
    }
    for (const action of event.actions) {
      lines.push(`  ${q(`${event.name}.${action.name}`)}: ${fieldsLiteral(action.fields)},`);
    }
  }
  lines.push('} as const;', '');
  return lines.join('\n');
}

/**
 * Builds every generated file from a description. Pure: reads only the given source.
 */
export function generate(source: { file: string; version: string }): GeneratedFiles {
  const description = JSON.parse(readFileSync(source.file, 'utf8')) as Description;
  if (typeof description.webhooks !== 'object' || description.webhooks === null) {
    throw new Error(`"${source.file}" has no "webhooks" section`);
  }
  const resolver = new Resolver(description);
  const entries = readEntries(description, resolver);
  const rawNames = new Map<string, string>();
  for (const { post } of Object.values(description.webhooks)) {
    const raw = post.operationId.split('/')[0]!.replaceAll('-', '_');
    rawNames.set(neutralName(raw), raw);
  }
  const events = buildModel(entries, rawNames);
  for (const event of events) {
    for (const name of [event.name, ...event.actions.map((a) => a.name)]) {
      if (name.toLowerCase().includes(PLATFORM_WORD)) throw new Error(`name "${name}" is not neutral`);
    }
  }
  const commonTypes = new Map<CommonField, CommonFieldType[]>();
  for (const field of COMMON_FIELD_NAMES)
    commonTypes.set(field, commonFieldTypes(description, resolver, field));

  return new Map([
    ['catalogue.ts', emitCatalogue(events, source.version)],
    ['event-names.ts', emitEventNames(events, source.version)],
    ['payload-maps.ts', emitPayloadMaps(events, source.version)],
    ['payload-shapes.ts', emitPayloadShapes(events, commonTypes, source.version)],
    ['payloads.ts', emitPayloads(events, commonTypes, source.version)],
  ]);
}

/**
 * Files in `outDir` that differ from `files`, are missing, or are no longer produced.
 */
export function staleFiles(outDir: string, files: GeneratedFiles): string[] {
  const stale: string[] = [];
  for (const [name, content] of files) {
    const path = join(outDir, name);
    if (!existsSync(path)) stale.push(`${name} (missing)`);
    else if (readFileSync(path, 'utf8') !== content) stale.push(`${name} (differs)`);
  }
  if (existsSync(outDir)) {
    for (const name of readdirSync(outDir).sort()) {
      if (!files.has(name)) stale.push(`${name} (not generated any more)`);
    }
  }
  return stale;
}

/**
 * Writes the files into `outDir` (created when missing).
 */
export function writeFiles(outDir: string, files: GeneratedFiles): void {
  mkdirSync(outDir, { recursive: true });
  for (const [name, content] of files) writeFileSync(join(outDir, name), content);
}

function option(args: string[], name: string): string | undefined {
  const index = args.indexOf(name);
  if (index === -1) return undefined;
  const value = args[index + 1];
  if (value === undefined || value.startsWith('--')) throw new TypeError(`option "${name}" needs a value`);
  return value;
}

/**
 * Command-line entry; returns the exit status: 0 done or up to date, 1 stale or failed, 2 bad usage.
 */
export function main(args: string[]): number {
  const known = new Set(['--check', '--out', '--source']);
  for (const [i, arg] of args.entries()) {
    if (arg.startsWith('--') && !known.has(arg)) {
      process.stderr.write(`unknown option "${arg}"\n`);
      return 2;
    }
    if (!arg.startsWith('--') && !['--out', '--source'].includes(args[i - 1] ?? '')) {
      process.stderr.write(`unexpected argument "${arg}"\n`);
      return 2;
    }
  }
  const outDir = resolve(option(args, '--out') ?? defaultOutDir);
  const sourceFile = option(args, '--source');
  let files: GeneratedFiles;
  try {
    const source = defaultSource();
    files = generate(
      sourceFile === undefined ? source : { file: resolve(sourceFile), version: source.version },
    );
  } catch (error) {
    process.stderr.write(`cannot generate the webhook catalogue: ${(error as Error).message}\n`);
    return 1;
  }
  const shown = relative(process.cwd(), outDir) || '.';
  if (args.includes('--check')) {
    const stale = staleFiles(outDir, files);
    if (stale.length > 0) {
      process.stderr.write(
        `generated webhook catalogue in ${shown} is stale:\n${stale.map((s) => `  ${s}\n`).join('')}` +
          'run `npm run generate` and commit the result\n',
      );
      return 1;
    }
    process.stdout.write(`generated webhook catalogue in ${shown} is up to date (${files.size} files)\n`);
    return 0;
  }
  writeFiles(outDir, files);
  process.stdout.write(`wrote ${files.size} files to ${shown}\n`);
  return 0;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main(process.argv.slice(2));
}
