import { DiscoveryError } from './errors.js';
import type { Response } from './response.js';

/** The endpoints a client is built with from a document: each must be an absolute http(s) URL. */
const ENDPOINT_KEYS = ['authorization_endpoint', 'token_endpoint', 'revocation_endpoint'] as const;

function isHttpUrl(value: string): boolean {
  if (!URL.canParse(value)) return false;
  const { protocol } = new URL(value);
  return protocol === 'http:' || protocol === 'https:';
}

/**
 * The discovery document locations for an issuer, in the order they are tried: OpenID Connect
 * (appended to the issuer's path), then RFC 8414 (inserted before it).
 */
export function discoveryUrls(issuer: string): [string, string] {
  let url: URL;
  try {
    url = new URL(issuer);
  } catch (cause) {
    throw new TypeError(`"issuer" must be an absolute URL`, { cause });
  }
  if (url.search !== '' || url.hash !== '') throw new TypeError(`"issuer" must have no query or fragment`);
  const path = url.pathname.replace(/\/+$/, '');
  return [
    `${url.origin}${path}/.well-known/openid-configuration`,
    `${url.origin}/.well-known/oauth-authorization-server${path}`,
  ];
}

/**
 * Fetches and checks the provider metadata of `issuer` with `get` (a GET returning a Response without
 * throwing on 4xx). The document's `issuer` must equal the requested issuer.
 *
 * @see https://www.rfc-editor.org/rfc/rfc8414#section-3.3
 */
export async function discoverMetadata(
  issuer: string,
  get: (url: string) => Promise<Response>,
): Promise<Record<string, unknown>> {
  const urls = discoveryUrls(issuer);
  const failures: string[] = [];
  let lastError: unknown;
  for (const url of urls) {
    let response: Response;
    try {
      response = await get(url);
    } catch (error) {
      lastError = error;
      failures.push(`${url}: ${(error as Error).name}`);
      continue;
    }
    if (response.status !== 200) {
      failures.push(`${url}: status ${response.status}`);
      continue;
    }
    const doc = response.parsed;
    if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) {
      failures.push(`${url}: not a JSON object`);
      continue;
    }
    const metadata = { ...(doc as Record<string, unknown>) };
    if (metadata.issuer !== issuer) {
      throw new DiscoveryError(
        'issuer_mismatch',
        `discovery document issuer ${JSON.stringify(metadata.issuer)} does not match the requested issuer "${issuer}"`,
      );
    }
    if (typeof metadata.token_endpoint !== 'string' && typeof metadata.authorization_endpoint !== 'string') {
      throw new DiscoveryError('invalid_metadata', `discovery document of "${issuer}" names no endpoints`);
    }
    for (const key of ENDPOINT_KEYS) {
      const value = metadata[key];
      if (typeof value === 'string' && !isHttpUrl(value)) {
        throw new DiscoveryError(
          'invalid_metadata',
          `discovery document of "${issuer}" has a "${key}" that is not an http or https URL`,
        );
      }
    }
    return metadata;
  }
  throw new DiscoveryError(
    'discovery_failed',
    `no discovery document found for issuer "${issuer}" (${failures.join('; ')})`,
    lastError,
  );
}
