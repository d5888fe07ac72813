import { type Forge, Forges, resolvePreset } from '../../webhooks/index.js';
import type { HeaderMap } from '../types.js';

/** What a masked value reads as; a `sha256=` / `sha1=` prefix is kept in front of it (the scheme, not the proof). */
export const MASKED = '[masked]';

/** Every signature or token header of every forge preset, lowercase. */
export const SIGNATURE_HEADERS: ReadonlySet<string> = new Set(
  Forges.flatMap((forge) => resolvePreset(forge).signatures.map((source) => source.header)),
);

/** Credentials that are no signature but are never kept either. */
const CREDENTIAL_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie', 'set-cookie']);

/** Any other header whose name says it carries a credential (`x-api-key`, `x-custom-token`, ...). */
const CREDENTIAL_NAME = /signature|token|secret|password|passwd|api-?key|auth|credential|session/i;

const SCHEME_PREFIX = /^(sha1|sha256|sha512)=/i;

/**
 * Headers known to carry nothing secret, kept in clear for every forge: what HTTP and tracing put on a request.
 * Every other value is masked: forges (GitLab, Gitea) let users add headers of their own, and those hold keys and
 * tokens under any name (`x-webhook-key`, `x-hmac`, `cf-access-jwt-assertion`).
 */
const HARMLESS_HEADERS: readonly string[] = [
  'accept',
  'accept-encoding',
  'connection',
  'content-encoding',
  'content-type',
  'expect',
  'traceparent',
  'tracestate',
  'user-agent',
  'x-forwarded-for',
];

/** Per preset, besides its event, delivery and Standard Webhooks id/timestamp headers: the forge's own harmless ones. */
const PRESET_HARMLESS: Readonly<Record<Forge, readonly string[]>> = {
  generic: [],
  github: [
    'x-github-hook-id',
    'x-github-hook-installation-target-id',
    'x-github-hook-installation-target-type',
  ],
  gitea: ['x-gitea-hook-installation-target-type', 'x-gogs-event', 'x-gogs-delivery'],
  forgejo: ['x-forgejo-hook-installation-target-type', 'x-gitea-event', 'x-gitea-delivery'],
  gitlab: ['x-gitlab-instance', 'x-gitlab-webhook-uuid', 'x-gitlab-event-uuid', 'idempotency-key'],
  bitbucket: ['x-request-uuid', 'x-hook-uuid', 'x-attempt-number', 'x-event-key'],
  standard: [],
  svix: [],
};

/** The headers a preset's deliveries show in clear, lowercase. */
function harmlessOf(forge: Forge): ReadonlySet<string> {
  const preset = resolvePreset(forge);
  return new Set([
    ...HARMLESS_HEADERS,
    ...preset.eventHeaders,
    ...preset.deliveryHeaders,
    ...preset.standardHeaders.flatMap((names) => [names.id, names.timestamp]),
    ...PRESET_HARMLESS[forge],
  ]);
}

const HARMLESS_BY_FORGE = new Map(Forges.map((forge) => [forge, harmlessOf(forge)]));
/** A record of no known forge: what any preset shows in clear. */
const HARMLESS_ANY: ReadonlySet<string> = new Set(
  [...HARMLESS_BY_FORGE.values()].flatMap((names) => [...names]),
);

/** Largest header value kept, in characters; a longer one is cut and marked with `…`. */
const MAX_VALUE_CHARS = 1024;
/** Most headers kept (sorted by name). */
const MAX_HEADERS = 100;

/**
 * Headers the front door adds (Function URL, API Gateway, CloudFront: `host`, `via`, `x-amzn-*`, `x-amz-cf-*`,
 * `x-forwarded-port` and `-proto`) and `content-length` (the record's `bodyBytes` holds it): not the forge's.
 * `x-forwarded-for`, the sender's address, is the forge's and is kept.
 */
const FRONT_DOOR_HEADER = /^(?:host|via|content-length|x-amzn-.*|x-amz-cf-.*|x-forwarded-(?:port|proto))$/;

/** Whether a header (any case) is one the front door added, which the delivery log does not keep. */
export function isFrontDoorHeader(name: string): boolean {
  return FRONT_DOOR_HEADER.test(name.toLowerCase());
}

/**
 * The headers the forge sent: without the ones {@link isFrontDoorHeader} names. The delivery log keeps these
 * (masked), so a record stays within one DynamoDB write unit (1 KB) for a usual delivery.
 *
 * @example
 * ```ts
 * forgeHeaders({ Host: 'abc.lambda-url.us-east-1.on.aws', 'X-GitHub-Event': 'push' }); // { 'X-GitHub-Event': 'push' }
 * ```
 */
export function forgeHeaders(headers: HeaderMap | undefined): HeaderMap | undefined {
  if (typeof headers !== 'object' || headers === null) return headers;
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !isFrontDoorHeader(name)));
}

/**
 * Whether a header (any case) is masked by {@link maskHeaders}: every one but those known to be harmless for the
 * forge (any forge's when it is not given), and always a signature or credential header.
 */
export function isMaskedHeader(name: string, forge?: string | undefined): boolean {
  const lower = name.toLowerCase();
  if (SIGNATURE_HEADERS.has(lower) || CREDENTIAL_HEADERS.has(lower) || CREDENTIAL_NAME.test(lower))
    return true;
  const harmless = (forge === undefined ? undefined : HARMLESS_BY_FORGE.get(forge as Forge)) ?? HARMLESS_ANY;
  return !harmless.has(lower);
}

function maskValue(value: string): string {
  const scheme = SCHEME_PREFIX.exec(value.trim());
  return scheme === null ? MASKED : `${scheme[1]?.toLowerCase()}=${MASKED}`;
}

/**
 * A delivery's headers safe to store and show: names lowercased, repeated values joined with `, `, every value
 * but those of the headers known to be harmless for `forge` (HTTP's, tracing's, the preset's event, delivery and
 * hook ids) replaced by `[masked]` (keeping only a `sha256=` / `sha1=` scheme prefix), values cut at 1,024
 * characters, at most 100 headers. The names stay: a masked header still shows it was sent.
 *
 * @example
 * ```ts
 * maskHeaders({ 'X-Hub-Signature-256': 'sha256=9f2c…', 'X-Gitlab-Token': 's3cret' });
 * // { 'x-hub-signature-256': 'sha256=[masked]', 'x-gitlab-token': '[masked]' }
 * ```
 */
export function maskHeaders(
  headers: HeaderMap | undefined,
  forge?: string | undefined,
): Record<string, string> {
  const masked: Record<string, string> = {};
  if (typeof headers !== 'object' || headers === null) return masked;
  const names = Object.keys(headers)
    .filter((name) => headers[name] !== undefined)
    .sort((a, b) => a.toLowerCase().localeCompare(b.toLowerCase()));
  for (const name of names) {
    const raw = headers[name];
    const value = Array.isArray(raw) ? raw.map(String).join(', ') : String(raw);
    const lower = name.toLowerCase().slice(0, 256);
    if (!Object.hasOwn(masked, lower) && Object.keys(masked).length >= MAX_HEADERS) break;
    const safe = isMaskedHeader(lower, forge)
      ? maskValue(value)
      : value.length > MAX_VALUE_CHARS
        ? `${value.slice(0, MAX_VALUE_CHARS)}…`
        : value;
    // Two spellings of one header (`X-A` and `x-a`) are one header, as HTTP has it.
    masked[lower] = Object.hasOwn(masked, lower) ? `${masked[lower]}, ${safe}` : safe;
  }
  return masked;
}
