// A YAML file of the project (serverless.yml, a stage file it includes) as plain data, for tests that hold code to
// what the file declares. CloudFormation's short tags (`!GetAtt`, `!Ref`...) are not YAML's: their values are read
// as they are written.
import { readFileSync } from 'node:fs';
import { parseDocument } from 'yaml';

const ROOT = new URL('../../', import.meta.url);
const CFN_TAGS = ['!GetAtt', '!Ref', '!Sub', '!Join', '!Select', '!If', '!Equals', '!ImportValue'];

/** The file at `path` (from the project's root), CloudFormation's short tags read as plain values. */
export function readProjectYaml(path: string): Record<string, unknown> {
  const document = parseDocument(readFileSync(new URL(path, ROOT), 'utf8'), {
    customTags: CFN_TAGS.map((tag) => ({ tag, resolve: (value: unknown) => value })),
  });
  return document.toJS({ maxAliasCount: 100 }) as Record<string, unknown>;
}
