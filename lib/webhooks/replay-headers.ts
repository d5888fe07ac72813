import { type Forge, resolvePreset } from './forges.js';
import { deliveryHeaders } from './sign.js';

/** Headers the HTTP client sets itself; a replay never copies them. */
const TRANSPORT_HEADERS = new Set([
  'host',
  'content-length',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'expect',
  'upgrade',
]);

/**
 * The headers of a replay: the stored ones as received, but the transport headers, the masked signature
 * headers signed again over the same body with `secret` as `forge` signs (a Standard Webhooks timestamp made
 * now), and the delivery id header set to `id`.
 * A signature header the stored ones lack (a refused delivery) is added all the same, unless `signMissing` is false.
 */
export function replayHeaders(
  stored: Record<string, string>,
  body: Uint8Array,
  options: { secret: string; forge: Forge; id: string; signMissing?: boolean },
): Record<string, string> {
  const preset = resolvePreset(options.forge);
  const signed = deliveryHeaders(options.secret, body, {
    forge: options.forge,
    name: 'replay',
    id: options.id,
  });
  // A Standard Webhooks timestamp is signed too: it is written afresh with the signature.
  const signatureHeaders = new Set([
    ...preset.signatures.map((signature) => signature.header),
    ...preset.standardHeaders.flatMap((set) => [set.signature, set.timestamp]),
  ]);
  const idHeaders = new Set([...preset.deliveryHeaders, ...preset.standardHeaders.map((set) => set.id)]);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(stored)) {
    if (TRANSPORT_HEADERS.has(name)) continue;
    if (signatureHeaders.has(name)) {
      const fresh = signed[name];
      if (fresh !== undefined) headers[name] = fresh;
    } else if (idHeaders.has(name)) {
      headers[name] = options.id;
    } else if (!value.includes('[masked]')) {
      headers[name] = value;
    }
  }
  if (options.signMissing ?? true)
    for (const header of signatureHeaders)
      if (headers[header] === undefined && signed[header] !== undefined)
        headers[header] = signed[header] as string;
  return headers;
}
