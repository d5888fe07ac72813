/**
 * Forge presets: each forge's delivery headers and signature schemes, how its event names route onto the
 * catalogue's, and its traits (whose event names it sends, its secrets' form, its delivery-log API). Code that
 * treats forges differently reads the trait here, never the forge's name.
 */

import { randomBytes } from 'node:crypto';
import {
  type ForgeRoute,
  routeBitbucket,
  routeCatalogue,
  routeGitea,
  routeGitlab,
  routeTyped,
} from './forge-routes.js';
import {
  bitbucketResourceRule,
  githubResourceRule,
  gitlabResourceRule,
  type ResourceRule,
} from './resource/rules.js';
import { STANDARD_HEADERS, type StandardHeaderNames, SVIX_HEADERS, standardSecret } from './standard.js';

export type { ForgeRoute } from './forge-routes.js';

/**
 * The forges with a preset. `generic` is the neutral `X-Forge-*` headers; `standard` is the Standard Webhooks
 * scheme (`webhook-*` headers) and `svix` the same scheme under `svix-*` names.
 */
export const Forges = [
  'generic',
  'github',
  'gitea',
  'forgejo',
  'gitlab',
  'bitbucket',
  'standard',
  'svix',
] as const;

/** A forge with a preset. */
export type Forge = (typeof Forges)[number];

/**
 * How a signature header carries its proof:
 * - `sha256`: `sha256=<hex>` HMAC-SHA256 (`X-Hub-Signature-256`; Bitbucket's `X-Hub-Signature`);
 * - `sha1`: `sha1=<hex>` HMAC-SHA1 (the legacy `X-Hub-Signature`);
 * - `hex-sha256`: the bare hex HMAC-SHA256 (`X-Gitea-Signature`, `X-Forgejo-Signature`);
 * - `token`: the shared secret itself (`X-Gitlab-Token`): no body integrity;
 * - `standard`: Standard Webhooks `v1,<base64>` entries, an HMAC-SHA256 over `id.timestamp.body` keyed with
 *   the decoded `whsec_` secret, with the id and timestamp in their own headers (`webhook-signature`).
 */
export type SignatureScheme = 'sha256' | 'sha1' | 'hex-sha256' | 'token' | 'standard';

/** One header that may carry a delivery's signature, lowercase. */
export interface SignatureSource {
  readonly header: string;
  readonly scheme: SignatureScheme;
}

/** A forge's preset: header names (lowercase, first present wins) and signature sources. */
export interface ForgePreset {
  readonly forge: Forge;
  /** Event name headers, in order of preference. */
  readonly eventHeaders: readonly string[];
  /** Delivery id headers, in order of preference. */
  readonly deliveryHeaders: readonly string[];
  /**
   * The header naming the hook that sent a delivery, where the forge's delivery id names the event rather than
   * one hook's delivery of it (GitHub: two Apps or hooks on one URL get one event under one GUID). Part of the
   * delivery's identity: two hooks' deliveries of one event are two deliveries (docs/forges.md, "Hook identity").
   */
  readonly hookHeaders: readonly string[];
  /**
   * Signature headers. Every HMAC-SHA256 one present must match; a sha1 one counts only when no sha256 one is
   * present; a token only when no HMAC is present.
   */
  readonly signatures: readonly SignatureSource[];
  /**
   * The Standard Webhooks header sets the preset reads, first one whose signature header is present wins;
   * such a delivery is verified by its `standard` signature (and its timestamp) alone.
   */
  readonly standardHeaders: readonly StandardHeaderNames[];
  /**
   * The forge-neutral preset (`generic`): the catalogue's own names under `X-Forge-*` headers, so a delivery is
   * dispatched as it came (no `forge`, no native name) and a local stack's `default` source uses it.
   */
  readonly neutral: boolean;
  /**
   * Whose event names the forge sends: `catalogue`, a forge's own names mapped onto the catalogue (a name the
   * catalogue lacks is likely a typo); `sender`, a Standard Webhooks sender's own names in the payload's `type`
   * (`contact.created`), which no catalogue lists.
   */
  readonly eventNames: 'catalogue' | 'sender';
  /** A source's secret: any text, or a Standard Webhooks key (`whsec_<base64>`). */
  readonly secretForm: 'text' | 'whsec';
  /**
   * The forge can sign the Standard Webhooks way with a `whsec_` signing token instead of sending its secret
   * token (GitLab): which one a source verifies is its choice (`verifyWith`).
   */
  readonly signingToken: boolean;
  /**
   * The forge's REST API for a hook's delivery log (list, redeliver), which the reconciler reads; `undefined` for
   * a forge without one (Gitea, Forgejo, Bitbucket, Standard Webhooks senders).
   */
  readonly deliveryLog: DeliveryLogTrait | undefined;
  /** Maps the forge's own event name (and its payload) onto the catalogue's event and action. */
  readonly route: (nativeName: string, payload: unknown) => ForgeRoute;
  /**
   * The keys of the repository a delivery comes from and of the resource it is about (a pull request, an issue,
   * a pushed ref); `undefined` for a sender whose payloads name none (`generic`, Standard Webhooks senders), whose
   * key is the value at a path the user names (`resourceKeyAt`). docs/forges.md, "The resource a delivery is about".
   */
  readonly resource: ResourceRule | undefined;
}

/** A forge's delivery-log API: where it is, the hooks it logs, how long it keeps their deliveries. */
export interface DeliveryLogTrait {
  /** The API's default base URL (a source's `hook.api` overrides it). */
  readonly api: string;
  /** The hook kinds a source's `hook.kind` may name for this forge. */
  readonly hookKinds: readonly string[];
  /** How long the forge keeps a hook's deliveries, in hours: how far back the reconciler reads by default. */
  readonly windowHours: number;
}

const HUB_SIGNATURES: readonly SignatureSource[] = [
  { header: 'x-hub-signature-256', scheme: 'sha256' },
  { header: 'x-hub-signature', scheme: 'sha1' },
];

const PRESETS = {
  generic: {
    forge: 'generic',
    eventHeaders: ['x-forge-event'],
    deliveryHeaders: ['x-forge-delivery'],
    hookHeaders: [],
    signatures: HUB_SIGNATURES,
    standardHeaders: [],
    neutral: true,
    eventNames: 'catalogue',
    secretForm: 'text',
    signingToken: false,
    deliveryLog: undefined,
    route: routeCatalogue,
    resource: undefined,
  },
  github: {
    forge: 'github',
    eventHeaders: ['x-github-event'],
    // The GUID names the event, shared by every hook it is delivered to; X-GitHub-Hook-ID names the hook.
    deliveryHeaders: ['x-github-delivery'],
    hookHeaders: ['x-github-hook-id'],
    signatures: HUB_SIGNATURES,
    standardHeaders: [],
    neutral: false,
    eventNames: 'catalogue',
    secretForm: 'text',
    signingToken: false,
    // GitHub keeps a hook's deliveries 3 days, GitLab 7.
    deliveryLog: { api: 'https://api.github.com', hookKinds: ['repo', 'org', 'app'], windowHours: 72 },
    route: routeCatalogue,
    resource: githubResourceRule,
  },
  gitea: {
    forge: 'gitea',
    eventHeaders: ['x-gitea-event'],
    // A hook task's own UUID: already one per hook.
    deliveryHeaders: ['x-gitea-delivery'],
    hookHeaders: [],
    signatures: [{ header: 'x-gitea-signature', scheme: 'hex-sha256' }, ...HUB_SIGNATURES],
    standardHeaders: [],
    neutral: false,
    eventNames: 'catalogue',
    secretForm: 'text',
    signingToken: false,
    deliveryLog: undefined,
    route: routeGitea,
    resource: githubResourceRule,
  },
  forgejo: {
    forge: 'forgejo',
    eventHeaders: ['x-forgejo-event', 'x-gitea-event'],
    deliveryHeaders: ['x-forgejo-delivery', 'x-gitea-delivery'],
    hookHeaders: [],
    signatures: [
      { header: 'x-forgejo-signature', scheme: 'hex-sha256' },
      { header: 'x-gitea-signature', scheme: 'hex-sha256' },
      ...HUB_SIGNATURES,
    ],
    standardHeaders: [],
    neutral: false,
    eventNames: 'catalogue',
    secretForm: 'text',
    signingToken: false,
    deliveryLog: undefined,
    route: routeGitea,
    resource: githubResourceRule,
  },
  gitlab: {
    forge: 'gitlab',
    eventHeaders: ['x-gitlab-event'],
    // Idempotency-Key is one hook's delivery (kept across its retries): already one per hook.
    deliveryHeaders: ['idempotency-key', 'x-gitlab-event-uuid'],
    hookHeaders: [],
    signatures: [{ header: 'x-gitlab-token', scheme: 'token' }],
    // With a signing token, GitLab signs the Standard Webhooks way; its webhook-id equals Idempotency-Key.
    standardHeaders: [STANDARD_HEADERS],
    neutral: false,
    eventNames: 'catalogue',
    secretForm: 'text',
    signingToken: true,
    deliveryLog: { api: 'https://gitlab.com/api/v4', hookKinds: ['project', 'group'], windowHours: 168 },
    route: routeGitlab,
    resource: gitlabResourceRule,
  },
  bitbucket: {
    forge: 'bitbucket',
    eventHeaders: ['x-event-key'],
    // X-Hook-UUID names the webhook, not the delivery: every delivery of one hook carries the same one.
    deliveryHeaders: ['x-request-uuid'],
    hookHeaders: ['x-hook-uuid'],
    signatures: [{ header: 'x-hub-signature', scheme: 'sha256' }],
    standardHeaders: [],
    neutral: false,
    eventNames: 'catalogue',
    secretForm: 'text',
    signingToken: false,
    deliveryLog: undefined,
    route: routeBitbucket,
    resource: bitbucketResourceRule,
  },
  standard: {
    forge: 'standard',
    // No event header: the event is the payload's `type` (`contact.created`).
    eventHeaders: [],
    // The message id, the same for every endpoint it is sent to: each endpoint is a source of its own here.
    deliveryHeaders: [STANDARD_HEADERS.id],
    hookHeaders: [],
    signatures: [{ header: STANDARD_HEADERS.signature, scheme: 'standard' }],
    standardHeaders: [STANDARD_HEADERS],
    neutral: false,
    eventNames: 'sender',
    secretForm: 'whsec',
    signingToken: false,
    deliveryLog: undefined,
    route: routeTyped,
    resource: undefined,
  },
  svix: {
    forge: 'svix',
    eventHeaders: [],
    // Svix's own names first; the Standard Webhooks names it can send instead are read too.
    deliveryHeaders: [SVIX_HEADERS.id, STANDARD_HEADERS.id],
    hookHeaders: [],
    signatures: [
      { header: SVIX_HEADERS.signature, scheme: 'standard' },
      { header: STANDARD_HEADERS.signature, scheme: 'standard' },
    ],
    standardHeaders: [SVIX_HEADERS, STANDARD_HEADERS],
    neutral: false,
    eventNames: 'sender',
    secretForm: 'whsec',
    signingToken: false,
    deliveryLog: undefined,
    route: routeTyped,
    resource: undefined,
  },
} satisfies Record<Forge, ForgePreset>;

/** The forges whose preset has a delivery-log API (GitHub, GitLab): the ones whose hooks can be read and managed. */
export type DeliveryLogForge = {
  [F in Forge]: (typeof PRESETS)[F]['deliveryLog'] extends undefined ? never : F;
}[Forge];

/** The forges with a delivery-log API, in the order of `Forges`. */
export const DeliveryLogForges: readonly DeliveryLogForge[] = Forges.filter(
  (forge): forge is DeliveryLogForge => PRESETS[forge].deliveryLog !== undefined,
);

/** The delivery-log trait of a forge that has one. */
export function deliveryLogOf(forge: DeliveryLogForge): DeliveryLogTrait {
  return PRESETS[forge].deliveryLog;
}

/**
 * The preset of a forge: its event, delivery and signature headers and signature schemes.
 *
 * @throws TypeError naming "forge" when it is not one of `Forges`.
 */
export function resolvePreset(forge: unknown = 'generic'): ForgePreset {
  if (typeof forge !== 'string' || !Object.hasOwn(PRESETS, forge)) {
    throw new TypeError(`"forge" must be one of ${Forges.map((name) => `"${name}"`).join(', ')}`);
  }
  return PRESETS[forge as Forge];
}

/**
 * Maps a forge's own event name (and its payload's action) onto the catalogue's event name and action where a
 * counterpart exists, and keeps the forge's own name or action where none does (the preset's `route`). The tables
 * are in docs/forges.md.
 *
 * @example
 * ```ts
 * routeForgeEvent('gitlab', 'Merge Request Hook', { object_attributes: { action: 'open' } });
 * // { name: 'pull_request', action: 'opened', nativeAction: 'open' }
 * ```
 */
export function routeForgeEvent(forge: Forge, nativeName: string, payload: unknown): ForgeRoute {
  return resolvePreset(forge).route(nativeName, payload);
}

/**
 * A secret in the form `forge`'s preset takes (its `secretForm`): for a Standard Webhooks sender a `whsec_` key
 * (derived from `seed`, else random), else `seed` itself, else 32 random bytes in hex.
 *
 * @example
 * ```ts
 * forgeSecret('github'); // '3f9c…' (64 hex digits)
 * forgeSecret('svix', 'dev-secret-svix'); // 'whsec_…', the same for the same seed
 * ```
 */
export function forgeSecret(forge: Forge, seed?: string): string {
  if (resolvePreset(forge).secretForm === 'whsec') return standardSecret(seed);
  return seed ?? randomBytes(32).toString('hex');
}
