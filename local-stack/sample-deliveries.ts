// Sample deliveries for the local stack: real payloads from @octokit/webhooks-examples, signed with
// lib/webhooks' `sign` and sent with the forge-neutral headers the ingest reads by default; and per forge, a
// sample in that forge's names, signed and sent with its own headers.
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import {
  asSentBy,
  deliveryHeaders,
  type Forge,
  forgeOwnSample,
  forgeOwnSampleNames,
  hasOwnShapes,
  sign,
} from '../lib/webhooks/index.js';

/** One example payload with the event name it belongs to. */
export interface ExampleDelivery {
  /** Event name (`issues`). */
  name: string;
  /** `payload.action` when there is one. */
  action: string | undefined;
  payload: Record<string, unknown>;
}

interface WebhookDefinition {
  name: string;
  examples: Record<string, unknown>[];
}

/**
 * Every example payload of @octokit/webhooks-examples (api.github.com), in the package's order.
 *
 * @example
 * ```ts
 * exampleDeliveries().length; // 329
 * ```
 * @see https://github.com/octokit/webhooks/tree/main/payload-examples
 */
export function exampleDeliveries(): ExampleDelivery[] {
  const require = createRequire(import.meta.url);
  const definitions = require('@octokit/webhooks-examples') as WebhookDefinition[];
  return definitions.flatMap((definition) =>
    definition.examples.map((payload) => ({
      name: definition.name,
      action: typeof payload.action === 'string' ? payload.action : undefined,
      payload,
    })),
  );
}

/**
 * The first example for `event` or `event.action` (`issues.opened`, `push`); a `TypeError` listing the known
 * names when there is none.
 *
 * @example
 * ```ts
 * sampleDelivery('issues.opened').payload.action; // 'opened'
 * ```
 * @see https://github.com/octokit/webhooks/tree/main/payload-examples
 */
export function sampleDelivery(eventName: string): ExampleDelivery {
  const [name, ...rest] = eventName.split('.');
  const action = rest.length > 0 ? rest.join('.') : undefined;
  const all = exampleDeliveries();
  const found = all.find(
    (example) => example.name === name && (action === undefined || example.action === action),
  );
  if (found === undefined) {
    const known = [
      ...new Set(all.map((example) => (example.action ? `${example.name}.${example.action}` : example.name))),
    ];
    throw new TypeError(`no example payload for "${eventName}"; known: ${known.join(', ')}`);
  }
  return found;
}

/** A delivery ready to POST: headers and the exact body the signature covers. */
export interface SignedDelivery {
  id: string;
  headers: Record<string, string>;
  body: string;
}

/**
 * Serializes and signs a delivery the way a forge does (`X-Hub-Signature-256` over the exact body).
 *
 * @example
 * ```ts
 * const { headers, body } = signDelivery(secret, 'issues', payload);
 * await fetch(url, { method: 'POST', headers, body });
 * ```
 * @see https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries
 */
export function signDelivery(
  secret: string,
  name: string,
  payload: unknown,
  options: { id?: string; body?: string } = {},
): SignedDelivery {
  const id = options.id ?? randomUUID();
  const body = options.body ?? JSON.stringify(payload);
  return {
    id,
    body,
    headers: {
      'content-type': 'application/json',
      'user-agent': 'forgebridge-send/1.0',
      'x-forge-event': name,
      'x-forge-delivery': id,
      'x-hub-signature-256': sign(secret, body),
    },
  };
}

/** A forge's own delivery: the event name it sends in its event header, and its payload. */
export interface ForgeSample {
  forge: Forge;
  /** The forge's own event name (`Merge Request Hook`, `pullrequest:created`). */
  nativeName: string;
  payload: Record<string, unknown>;
}

/**
 * A sample delivery as `forge` sends it for a catalogue name (`issues.opened`, `push`): GitHub, Gitea and Forgejo
 * send GitHub's names and payload shapes (the @octokit/webhooks-examples payload), GitLab and Bitbucket their own
 * names and small payloads in their documented shapes (lib/webhooks' `forgeOwnSample`: `pull_request.opened`,
 * `issues.opened` and `push` only); Standard Webhooks senders get GitHub's payload with the name as its `type`.
 *
 * @throws TypeError listing the known names when there is no sample.
 */
export function forgeSample(forge: Forge, eventName: string): ForgeSample {
  if (hasOwnShapes(forge)) {
    const found = forgeOwnSample(forge, eventName);
    if (found === undefined) {
      throw new TypeError(
        `no ${forge} sample for "${eventName}"; known: ${forgeOwnSampleNames(forge).join(', ')}`,
      );
    }
    return { forge, nativeName: found.nativeName, payload: found.payload };
  }
  const { name, payload } = sampleDelivery(eventName);
  return { forge, ...asSentBy(forge, eventName, { nativeName: name, payload }) };
}

/**
 * Serializes and signs a delivery the way `forge` does, with its own headers (lib/webhooks' `deliveryHeaders`:
 * GitLab's token, Gitea's bare hex beside `X-Hub-Signature-256`, ...).
 *
 * @example
 * ```ts
 * const { nativeName, payload } = forgeSample('gitlab', 'pull_request.opened');
 * const { headers, body } = signForgeDelivery(secret, 'gitlab', nativeName, payload);
 * ```
 */
export function signForgeDelivery(
  secret: string,
  forge: Forge,
  nativeName: string,
  payload: unknown,
  options: { id?: string; body?: string } = {},
): SignedDelivery {
  const id = options.id ?? randomUUID();
  const body = options.body ?? JSON.stringify(payload);
  const headers = deliveryHeaders(secret, body, { forge, name: nativeName, id });
  headers['user-agent'] = 'forgebridge-send/1.0';
  return { id, body, headers };
}
