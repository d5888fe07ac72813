// Every example payload shipped in `@octokit/webhooks-examples` (api.github.com and each ghes-* folder), with
// the name the forge sends it under, the neutral name our toolset reports it under, its action, and the
// exact JSON string a test signs and sends.
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** One example payload from `@octokit/webhooks-examples`. */
export interface WebhookExample {
  /** Folder of the package the example comes from: `api.github.com`, `ghes-35`, ... */
  readonly source: string;
  /** Position of the example within its event in that folder. */
  readonly index: number;
  /** The event name as the forge sends it in its event header (`github_app_authorization`). */
  readonly forgeName: string;
  /** The neutral event name our handlers see (`forge_app_authorization`). */
  readonly name: string;
  /** `payload.action` when the payload has a string action. */
  readonly action: string | undefined;
  /** The parsed payload. */
  readonly payload: Record<string, unknown>;
  /** The exact JSON text that a test signs and sends (compact `JSON.stringify` of the payload). */
  readonly json: string;
  /** A stable label for test names and failure messages: `api.github.com issues#3 (opened)`. */
  readonly label: string;
}

/** Forge event names that the toolset reports under a neutral name (docs/names.md: `forge_app_authorization`). */
export const neutralEventNames: Readonly<Record<string, string>> = {
  github_app_authorization: 'forge_app_authorization',
};

interface ExampleDefinition {
  name: string;
  examples: Record<string, unknown>[];
}

let cache: readonly WebhookExample[] | undefined;

/**
 * Loads every example of every event from every folder of `@octokit/webhooks-examples`, once per process.
 *
 * @example
 * const examples = loadWebhookExamples();
 * for (const example of examples) sign(secret, example.json);
 */
export function loadWebhookExamples(): readonly WebhookExample[] {
  if (cache) return cache;
  const require = createRequire(import.meta.url);
  const root = dirname(require.resolve('@octokit/webhooks-examples/package.json'));
  const sources = readdirSync(root, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
  const examples: WebhookExample[] = [];
  for (const source of sources) {
    const definitions = JSON.parse(
      readFileSync(join(root, source, 'index.json'), 'utf8'),
    ) as ExampleDefinition[];
    for (const definition of definitions) {
      definition.examples.forEach((payload, index) => {
        const action = typeof payload.action === 'string' ? payload.action : undefined;
        const name = neutralEventNames[definition.name] ?? definition.name;
        examples.push({
          source,
          index,
          forgeName: definition.name,
          name,
          action,
          payload,
          json: JSON.stringify(payload),
          label: `${source} ${definition.name}#${index}${action === undefined ? '' : ` (${action})`}`,
        });
      });
    }
  }
  if (examples.length === 0) throw new Error('no example payloads found in @octokit/webhooks-examples');
  cache = examples;
  return examples;
}
