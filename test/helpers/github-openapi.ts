/**
 * GitHub's official REST description (`@octokit/openapi`, api.github.com) as a validator of the deliveries
 * stand-in's answers (local-stack/github-deliveries.ts): each answer is checked against the response schema of
 * the hook-delivery operation it answers (list, get one, redeliver) for the hook's kind, an error against the
 * description's `basic-error`. A stand-in that drifts from GitHub's description fails the tests.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { StandInResponse } from '../../local-stack/github-deliveries.js';

interface OpenApiDocument {
  paths: Record<
    string,
    Record<string, { operationId?: string; parameters?: unknown[]; responses: Record<string, unknown> }>
  >;
  components: Record<string, Record<string, unknown>>;
}

const require = createRequire(import.meta.url);
let loaded: { doc: OpenApiDocument; ajv: Ajv } | undefined;

function load() {
  if (loaded !== undefined) return loaded;
  const file = require.resolve('@octokit/openapi/generated/api.github.com.json');
  const doc = JSON.parse(readFileSync(file, 'utf8')) as OpenApiDocument;
  // OpenAPI 3.0 schemas: `nullable`, `example` and the rest are not JSON Schema keywords Ajv needs to know.
  const ajv = new Ajv({ strict: false, validateSchema: false, allErrors: true });
  const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
  addFormats(ajv);
  ajv.addSchema({ $id: 'github', paths: doc.paths, components: doc.components });
  loaded = { doc, ajv };
  return loaded;
}

const pointer = (segment: string) => segment.replaceAll('~', '~0').replaceAll('/', '~1');

/** The description's path template of a stand-in path (`/repos/a/b/hooks/1/deliveries/7/attempts`). */
export function gitHubTemplate(path: string): string {
  const bare = path.split('?')[0] as string;
  // The forge API stand-in's comment route (local-stack/forge-api.ts).
  if (/^\/repos\/[^/]+\/[^/]+\/issues\/\d+\/comments$/.test(bare)) {
    return '/repos/{owner}/{repo}/issues/{issue_number}/comments';
  }
  // The webhooks API (local-stack/github-hooks.ts): the hooks, one hook, its pings.
  const hooks = /^\/(repos\/[^/]+\/[^/]+|orgs\/[^/]+)\/hooks(\/\d+)?(\/pings)?$/.exec(bare);
  if (hooks !== null) {
    const owner = bare.startsWith('/repos/') ? '/repos/{owner}/{repo}' : '/orgs/{org}';
    return `${owner}/hooks${hooks[2] === undefined ? '' : '/{hook_id}'}${hooks[3] ?? ''}`;
  }
  const tail = /\/deliveries(\/\d+)?(\/attempts)?$/.exec(bare);
  const suffix = `/deliveries${tail?.[1] === undefined ? '' : '/{delivery_id}'}${tail?.[2] ?? ''}`;
  if (bare.startsWith('/repos/')) return `/repos/{owner}/{repo}/hooks/{hook_id}${suffix}`;
  if (bare.startsWith('/orgs/')) return `/orgs/{org}/hooks/{hook_id}${suffix}`;
  return `/app/hook${suffix}`;
}

const validators = new Map<string, ValidateFunction>();

function validatorFor(ref: string): ValidateFunction {
  let validate = validators.get(ref);
  if (validate === undefined) {
    validate = load().ajv.compile({ $ref: ref });
    validators.set(ref, validate);
  }
  return validate;
}

/** The JSON schema reference of a response: the operation's `status` answer, `$ref`s to shared responses followed. */
function responseSchemaRef(template: string, method: string, status: number): string {
  const { doc } = load();
  const operation = doc.paths[template]?.[method.toLowerCase()];
  if (operation === undefined) throw new Error(`github's description has no ${method} ${template}`);
  let response = operation.responses[String(status)] as { $ref?: string } | undefined;
  let base = `github#/paths/${pointer(template)}/${method.toLowerCase()}/responses/${status}`;
  if (response?.$ref !== undefined) {
    base = `github${response.$ref}`;
    const name = response.$ref.split('/').at(-1) as string;
    response = doc.components.responses?.[name] as { $ref?: string } | undefined;
  }
  if (response === undefined)
    throw new Error(`github's description of ${method} ${template} has no ${status} answer`);
  return `${base}/content/application~1json/schema`;
}

/** The operation ids of the hook-delivery operations, for the tests to check what the stand-in covers. */
export function gitHubOperationId(path: string, method: string): string | undefined {
  return load().doc.paths[gitHubTemplate(path)]?.[method.toLowerCase()]?.operationId;
}

/** The query parameters an operation declares (its `$ref`ed ones by their names). */
export function gitHubQueryParameters(path: string, method: string): string[] {
  const { doc } = load();
  const operation = doc.paths[gitHubTemplate(path)]?.[method.toLowerCase()];
  return (operation?.parameters ?? [])
    .map((parameter) => {
      const ref = (parameter as { $ref?: string }).$ref;
      const resolved =
        ref === undefined ? parameter : doc.components.parameters?.[ref.split('/').at(-1) as string];
      return resolved as { name?: string; in?: string };
    })
    .filter((parameter) => parameter?.in === 'query')
    .map((parameter) => parameter.name as string);
}

/**
 * The errors of one stand-in answer against GitHub's description (an empty list when it conforms): a success
 * against its operation's response schema, an error against `basic-error`.
 */
export function gitHubResponseErrors(response: StandInResponse): string[] {
  if (response.status === 204) {
    // No content: the operation must declare its 204, and the answer must be empty.
    const operation = load().doc.paths[gitHubTemplate(response.path)]?.[response.method.toLowerCase()];
    const declared = operation?.responses['204'] !== undefined;
    return declared && response.body === undefined
      ? []
      : [`${response.method} ${response.path} 204: ${declared ? 'has a body' : 'not a declared answer'}`];
  }
  const ref =
    response.operation === 'error'
      ? 'github#/components/schemas/basic-error'
      : response.operation === 'invalid'
        ? 'github#/components/schemas/validation-error'
        : responseSchemaRef(gitHubTemplate(response.path), response.method, response.status);
  const validate = validatorFor(ref);
  if (validate(response.body)) return [];
  return (validate.errors ?? []).map(
    (error) =>
      `${response.method} ${response.path} ${response.status}: ${error.instancePath} ${error.message}`,
  );
}
