/**
 * GitLab's documented webhook fields (test/fixtures/gitlab/hooks.schema.json) as a validator of the hooks API the
 * GitLab stand-in serves (local-stack/gitlab-hooks.ts): each hook, each list of hooks, the test-hook answer and each
 * error body, by the operation the stand-in recorded with it.
 */
import { readFileSync } from 'node:fs';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { GitLabStandInResponse } from '../../local-stack/gitlab-events.js';

let ajv: Ajv | undefined;
const validators = new Map<string, ValidateFunction>();

function validator(definition: string): ValidateFunction {
  if (ajv === undefined) {
    const schema = JSON.parse(
      readFileSync(new URL('../fixtures/gitlab/hooks.schema.json', import.meta.url), 'utf8'),
    ) as object;
    ajv = new Ajv({ allErrors: true, allowUnionTypes: true });
    (addFormatsModule as unknown as (ajv: Ajv) => Ajv)(ajv);
    ajv.addSchema(schema);
  }
  let validate = validators.get(definition);
  if (validate === undefined) {
    validate = ajv.compile({ $ref: `gitlab-hooks#/definitions/${definition}` });
    validators.set(definition, validate);
  }
  return validate;
}

const DEFINITIONS: Record<string, string> = {
  hooks: 'hooks',
  hook: 'hook',
  'create-hook': 'hook',
  'update-hook': 'hook',
  test: 'test',
  error: 'error',
};

/** Whether the answer is one of the hooks API's (not the events API's). */
export function isGitLabHooksAnswer(response: GitLabStandInResponse): boolean {
  return /\/hooks(\/\d+(\/test\/[^/]+)?)?$/.test(response.path.split('?')[0] as string);
}

/** Every way one hooks answer differs from GitLab's documented fields; empty when it conforms. */
export function gitLabHookResponseErrors(response: GitLabStandInResponse): string[] {
  const definition = DEFINITIONS[response.operation] ?? 'error';
  const validate = validator(definition);
  if (validate(response.body)) return [];
  return (validate.errors ?? []).map(
    (error) =>
      `${response.method} ${response.path} ${response.status}: ${error.instancePath || '/'} ${error.message}`,
  );
}
