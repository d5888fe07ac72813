/**
 * The key of a delivery from a sender without a resource rule (Standard Webhooks senders, the generic preset):
 * the value at a path the user names, in a small subset of JSONPath (RFC 9535) parsed here without `eval`.
 */

/** Reads a delivery's key from its payload: a string, or `undefined` when the payload has no usable value there. */
export type ResourceKeyReader = (payload: unknown) => string | undefined;

const NAME = /^[A-Za-z_][A-Za-z0-9_-]*/;
const INDEX = /^\[(0|[1-9][0-9]{0,8})\]/;
const QUOTED = /^\[(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)")\]/;
const MAX_PATH_LENGTH = 512;
const SUPPORTED = "a path is $ followed by .name, ['name'] or [index] steps, as in $.data.customer.id";

/**
 * Parses `path` into its steps: field names (strings) and array indexes (numbers).
 *
 * The subset: `$`, then one or more `.name` (a letter or `_`, then letters, digits, `_`, `-`), `['name']` or
 * `["name"]` (any name; `\` escapes the quote or itself) and `[index]` (a non-negative integer) steps. Wildcards,
 * recursive descent (`..`), filters, slices, unions and negative indexes are not supported.
 *
 * @throws TypeError naming the path and where it stops being supported.
 */
export function parseKeyPath(path: unknown): readonly (string | number)[] {
  if (typeof path !== 'string') throw new TypeError('"path" must be a string');
  if (path.length > MAX_PATH_LENGTH)
    throw new TypeError(`"path" must be at most ${MAX_PATH_LENGTH} characters`);
  if (!path.startsWith('$'))
    throw new TypeError(`"path" ${JSON.stringify(path)} must start with $; ${SUPPORTED}`);
  const steps: (string | number)[] = [];
  let rest = path.slice(1);
  while (rest.length > 0) {
    const at = path.length - rest.length;
    const name = rest.startsWith('.') ? NAME.exec(rest.slice(1)) : null;
    const index = INDEX.exec(rest);
    const quoted = QUOTED.exec(rest);
    if (name !== null) {
      steps.push(name[0]);
      rest = rest.slice(1 + name[0].length);
    } else if (index !== null) {
      steps.push(Number(index[1]));
      rest = rest.slice(index[0].length);
    } else if (quoted !== null) {
      steps.push((quoted[1] ?? quoted[2] ?? '').replace(/\\(.)/g, '$1'));
      rest = rest.slice(quoted[0].length);
    } else {
      throw new TypeError(
        `"path" ${JSON.stringify(path)} is not supported at character ${at + 1} (${JSON.stringify(rest.slice(0, 12))}); ${SUPPORTED}`,
      );
    }
  }
  if (steps.length === 0) throw new TypeError(`"path" ${JSON.stringify(path)} names no field; ${SUPPORTED}`);
  return steps;
}

/**
 * A reader of the key at `path` (see `parseKeyPath` for the subset): the value there when it is a non-empty
 * string or a finite number (as its decimal text), else `undefined`. Only a payload's own fields are read, never
 * inherited ones (`$.constructor` of a payload without that field is `undefined`). The path is parsed once, here.
 *
 * @throws TypeError for a path outside the subset.
 * @example
 * ```ts
 * const keyOf = resourceKeyAt('$.data.customer.id');
 * keyOf({ type: 'invoice.paid', data: { customer: { id: 'cus_1' } } }); // 'cus_1'
 * keyOf({ type: 'ping' }); // undefined
 * ```
 */
export function resourceKeyAt(path: string): ResourceKeyReader {
  const steps = parseKeyPath(path);
  return (payload) => {
    let value: unknown = payload;
    for (const step of steps) {
      if (typeof step === 'number') {
        if (!Array.isArray(value) || step >= value.length) return undefined;
        value = value[step];
      } else {
        if (
          value === null ||
          typeof value !== 'object' ||
          Array.isArray(value) ||
          !Object.hasOwn(value, step)
        ) {
          return undefined;
        }
        value = (value as Record<string, unknown>)[step];
      }
    }
    if (typeof value === 'string') return value.length > 0 ? value : undefined;
    return typeof value === 'number' && Number.isFinite(value) ? String(value) : undefined;
  };
}
