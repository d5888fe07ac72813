// An escaped backslash (consumed as a pair, so `\\u0041` is never mistaken for an escape) or a `\uXXXX`
// escape (JSON.stringify writes its hex digits lowercase).
const ESCAPE = /\\\\|\\u[0-9a-f]{4}/g;

function upperEscape(match: string): string {
  return match.length === 2 ? match : `\\u${match.slice(2).toUpperCase()}`;
}

/**
 * Serializes a parsed payload to the JSON text the forge would have signed: `JSON.stringify` without
 * whitespace, then every `\uXXXX` escape written with uppercase hex as the forge writes it (`\u001B` where
 * `JSON.stringify` writes `\u001b`; this covers control characters other than `\b \f \n \r \t`, and lone
 * surrogates). Other characters stay raw UTF-8, as the forge sends them.
 *
 * The result can still differ from the bytes the forge signed, so verifying a re-serialized object can fail
 * where the raw body would pass: a payload whose key order, number formatting (`1.0`, `1e3`), escaped
 * non-ASCII or escaped `/`, `<`, `>`, `&` differ from `JSON.stringify`'s output, or a body that is not
 * compact JSON. Keep the raw body whenever you can.
 *
 * @example
 * ```ts
 * serializePayload({ text: '\u001b[1m' }); // '{"text":"\\u001B[1m"}'
 * ```
 */
export function serializePayload(payload: unknown): string {
  const json = JSON.stringify(payload);
  if (json === undefined) throw new TypeError('"payload" cannot be serialized to JSON');
  return json.includes('\\u') ? json.replace(ESCAPE, upperEscape) : json;
}
