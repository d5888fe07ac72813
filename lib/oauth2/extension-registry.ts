/** A named, ordered list of functions (the snaky_hash serializer's extension registries). */
export class ExtensionRegistry<F extends (value: never) => unknown> {
  readonly #entries = new Map<string, F>();

  /** Adds (or replaces) the extension `name`. */
  add(name: string, fn: F): this {
    if (typeof name !== 'string' || name === '') throw new TypeError(`"name" must be a non-empty string`);
    if (typeof fn !== 'function') throw new TypeError(`"fn" must be a function`);
    this.#entries.set(name, fn);
    return this;
  }

  /** Whether an extension `name` is registered. */
  has(name: string): boolean {
    return this.#entries.has(name);
  }

  /** Removes the extension `name`; true when it was there. */
  delete(name: string): boolean {
    return this.#entries.delete(name);
  }

  /** Removes every extension. */
  clear(): void {
    this.#entries.clear();
  }

  /** The registered names, in order. */
  names(): string[] {
    return [...this.#entries.keys()];
  }

  /** How many extensions are registered. */
  get size(): number {
    return this.#entries.size;
  }

  /** The registered functions, in order. */
  functions(): F[] {
    return [...this.#entries.values()];
  }
}
