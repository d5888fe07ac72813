import { ExtensionRegistry } from './extension-registry.js';
import { setOwn } from './url.js';

/** An extension that acts on a leaf value. */
export type ValueExtension = (value: unknown) => unknown;
/** An extension that acts on a whole hash (every object, nested ones included). */
export type HashExtension = (hash: Record<string, unknown>) => Record<string, unknown>;

/**
 * Converts a key to snake_case as the gem's SnakyHash does: trimmed, a space is `_`, `::` is `/`,
 * `ABCWord` -> `abc_word`, `aB` -> `a_b`, `-` is `_`, runs of `_` become one, then lowercase
 * (`first name` -> `first_name`, `foo__bar` -> `foo_bar`, `a::b` -> `a/b`).
 */
export function toSnakeCase(key: string): string {
  return (
    key
      .trim()
      .replace(/ /g, '_')
      .replace(/::/g, '/')
      // `ABCDef` -> `ABC_Def` with lookarounds: the gem's `([A-Z\d]+)([A-Z][a-z])` backtracks quadratically on a
      // long run of capitals, which a hostile server's key would turn into minutes of blocked event loop.
      .replace(/(?<=[A-Z\d])(?=[A-Z][a-z])/g, '_')
      .replace(/([a-z\d])([A-Z])/g, '$1_$2')
      .replace(/-/g, '_')
      .replace(/_{2,}/g, '_')
      .toLowerCase()
  );
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null || value instanceof SnakyHash;
}

const handler: ProxyHandler<SnakyHash> = {
  get(target, key, receiver) {
    if (typeof key !== 'string' || key in target) return Reflect.get(target, key, receiver);
    const snake = toSnakeCase(key);
    return snake !== key && Object.hasOwn(target, snake) ? target[snake] : undefined;
  },
  has(target, key) {
    if (key in target) return true;
    return typeof key === 'string' && Object.hasOwn(target, toSnakeCase(key));
  },
  set(target, key, value) {
    if (typeof key !== 'string') return Reflect.set(target, key, value);
    const name = Object.hasOwn(target, key) ? key : toSnakeCase(key);
    setOwn(target, name, convertValue(value, target.constructor as SnakyHashClass));
    return true;
  },
  deleteProperty(target, key) {
    if (typeof key !== 'string') return Reflect.deleteProperty(target, key);
    delete target[key];
    delete target[toSnakeCase(key)];
    return true;
  },
};

function convertValue(value: unknown, cls: SnakyHashClass): unknown {
  if (Array.isArray(value)) return value.map((item) => convertValue(item, cls));
  if (isPlainObject(value) && !(value instanceof cls)) return new cls(value);
  return value;
}

interface Registries {
  dumpValue: ExtensionRegistry<ValueExtension>;
  loadValue: ExtensionRegistry<ValueExtension>;
  dumpHash: ExtensionRegistry<HashExtension>;
  loadHash: ExtensionRegistry<HashExtension>;
}

const registries = new WeakMap<object, Registries>();

function registriesOf(cls: object): Registries {
  let found = registries.get(cls);
  if (!found) {
    found = {
      dumpValue: new ExtensionRegistry(),
      loadValue: new ExtensionRegistry(),
      dumpHash: new ExtensionRegistry(),
      loadHash: new ExtensionRegistry(),
    };
    registries.set(cls, found);
  }
  return found;
}

function applyValues(value: unknown, exts: ValueExtension[], hashExts: HashExtension[]): unknown {
  if (Array.isArray(value)) return value.map((v) => applyValues(v, exts, hashExts));
  if (isPlainObject(value)) {
    let hash: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) setOwn(hash, k, applyValues(v, exts, hashExts));
    for (const ext of hashExts) hash = ext(hash);
    return hash;
  }
  let out = value;
  for (const ext of exts) out = ext(out);
  return out;
}

/** A {@link SnakyHash} class or subclass, as given to `snakyHashClass`. */
export type SnakyHashClass = typeof SnakyHash;

/**
 * The hash class of parsed responses (the gem's `SnakyHash::StringKeyed` with its serializer mixin).
 * Keys are stored in snake_case (`Object.keys` and `JSON.stringify` show those), nested objects are
 * converted too, and any spelling of a key reads the same value (`hash.accessToken` ===
 * `hash.access_token`). `dump`/`load` serialize through four extension registries; a subclass carries
 * its own registries.
 */
export class SnakyHash {
  [key: string]: unknown;

  constructor(source: Record<string, unknown> = {}) {
    const cls = new.target;
    for (const [key, value] of Object.entries(source))
      setOwn(this, toSnakeCase(key), convertValue(value, cls));
    // biome-ignore lint/correctness/noConstructorReturn: the proxy gives reads under any spelling of a key
    return new Proxy(this, handler);
  }

  /** Extensions applied to every leaf value by {@link SnakyHash.dump}. */
  static get dumpValueExtensions(): ExtensionRegistry<ValueExtension> {
    // biome-ignore lint/complexity/noThisInStatic: each subclass carries its own registries
    return registriesOf(this).dumpValue;
  }

  /** Extensions applied to every leaf value by {@link SnakyHash.load}. */
  static get loadValueExtensions(): ExtensionRegistry<ValueExtension> {
    // biome-ignore lint/complexity/noThisInStatic: each subclass carries its own registries
    return registriesOf(this).loadValue;
  }

  /** Extensions applied to every hash (innermost first) by {@link SnakyHash.dump}. */
  static get dumpHashExtensions(): ExtensionRegistry<HashExtension> {
    // biome-ignore lint/complexity/noThisInStatic: each subclass carries its own registries
    return registriesOf(this).dumpHash;
  }

  /** Extensions applied to every hash (innermost first) by {@link SnakyHash.load}. */
  static get loadHashExtensions(): ExtensionRegistry<HashExtension> {
    // biome-ignore lint/complexity/noThisInStatic: each subclass carries its own registries
    return registriesOf(this).loadHash;
  }

  /** Serializes a hash to a JSON string, through this class's dump extensions. */
  static dump(obj: Record<string, unknown>): string {
    if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) {
      throw new TypeError(`"obj" must be an object`);
    }
    // biome-ignore lint/complexity/noThisInStatic: each subclass carries its own registries
    const r = registriesOf(this);
    return JSON.stringify(applyValues(obj, r.dumpValue.functions(), r.dumpHash.functions()));
  }

  /**
   * Reads a JSON string written by {@link SnakyHash.dump} into an instance of this class, through its load
   * extensions. An empty string gives an empty hash.
   */
  static load<T extends SnakyHash>(this: new (source?: Record<string, unknown>) => T, raw: string): T {
    if (typeof raw !== 'string') throw new TypeError(`"raw" must be a string`);
    const parsed: unknown = raw.trim() === '' ? {} : JSON.parse(raw);
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      throw new TypeError(`"raw" must hold a JSON object`);
    }
    // biome-ignore lint/complexity/noThisInStatic: each subclass carries its own registries
    const r = registriesOf(this);
    const value = applyValues(parsed, r.loadValue.functions(), r.loadHash.functions());
    return new this(value as Record<string, unknown>);
  }
}
