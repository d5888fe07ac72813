/**
 * GitLab's documented webhook-event fields (test/fixtures/gitlab/webhook-events.schema.json) as a validator of
 * the GitLab stand-in's answers (local-stack/gitlab-events.ts): each list answer (its events, its pagination
 * headers and the query it answered), each resend answer and each error body. A stand-in that drifts from
 * GitLab's documented fields fails the tests.
 */
import { readFileSync } from 'node:fs';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { GitLabStandInResponse } from '../../local-stack/gitlab-events.js';
import { gitLabHookResponseErrors, isGitLabHooksAnswer } from './gitlab-hooks-schema.js';

let ajv: Ajv | undefined;
const validators = new Map<string, ValidateFunction>();

function validator(definition: string): ValidateFunction {
  if (ajv === undefined) {
    const schema = JSON.parse(
      readFileSync(new URL('../fixtures/gitlab/webhook-events.schema.json', import.meta.url), 'utf8'),
    ) as object;
    ajv = new Ajv({ allErrors: true, allowUnionTypes: true });
    (addFormatsModule as unknown as (ajv: Ajv) => Ajv)(ajv);
    ajv.addSchema(schema);
  }
  let validate = validators.get(definition);
  if (validate === undefined) {
    validate = ajv.compile({ $ref: `gitlab-webhook-events#/definitions/${definition}` });
    validators.set(definition, validate);
  }
  return validate;
}

function errorsOf(label: string, definition: string, value: unknown): string[] {
  const validate = validator(definition);
  if (validate(value)) return [];
  return (validate.errors ?? []).map((error) => `${label}: ${error.instancePath || '/'} ${error.message}`);
}

/** The list query as the schema reads it: `status` and `status[]` both an array. */
function queryOf(path: string): Record<string, unknown> {
  const query: Record<string, unknown> = {};
  const params = new URL(path, 'http://127.0.0.1').searchParams;
  const status = [...params.getAll('status'), ...params.getAll('status[]')].flatMap((value) =>
    value.split(','),
  );
  if (status.length > 0) query.status = status;
  for (const [name, value] of params) if (name !== 'status' && name !== 'status[]') query[name] = value;
  return query;
}

/** Every way one answer differs from GitLab's documented fields; empty when it conforms. */
export function gitLabResponseErrors(response: GitLabStandInResponse): string[] {
  // The hooks API (local-stack/gitlab-hooks.ts) has its own documented fields.
  if (isGitLabHooksAnswer(response)) return gitLabHookResponseErrors(response);
  const label = `${response.method} ${response.path} ${response.status}`;
  if (response.operation === 'list') {
    return [
      ...errorsOf(label, 'list', response.body),
      ...errorsOf(`${label} headers`, 'listHeaders', response.headers),
      ...errorsOf(`${label} query`, 'listQuery', queryOf(response.path)),
    ];
  }
  if (response.operation === 'resend') return errorsOf(label, 'resend', response.body);
  return errorsOf(label, 'error', response.body);
}
