// In-memory storage for the local authorization server: one store per server, so parallel servers in one
// process never share tokens, with expiry, consumption and revoke-by-grant (what oidc-provider's adapter
// interface asks for). Unlike the provider's built-in development adapter it has no entry cap (a benchmark
// issues thousands of tokens) and prints no warning; expired entries are swept as new ones arrive.

interface Entry {
  payload: Record<string, unknown>;
  expiresAt: number;
}

/** The adapter interface oidc-provider calls, one instance per model name. */
export interface ProviderAdapter {
  upsert(id: string, payload: Record<string, unknown>, expiresIn?: number): Promise<void>;
  find(id: string): Promise<Record<string, unknown> | undefined>;
  findByUid(uid: string): Promise<Record<string, unknown> | undefined>;
  findByUserCode(userCode: string): Promise<Record<string, unknown> | undefined>;
  consume(id: string): Promise<void>;
  destroy(id: string): Promise<void>;
  revokeByGrantId(grantId: string): Promise<void>;
}

/**
 * Creates the adapter factory for one server: `adapter: createMemoryAdapter()` in the provider config.
 *
 * @example
 * new Provider(issuer, { adapter: createMemoryAdapter() });
 */
export function createMemoryAdapter(): (model: string) => ProviderAdapter {
  const entries = new Map<string, Entry>();
  const byGrant = new Map<string, Set<string>>();
  const byUid = new Map<string, string>();
  const byUserCode = new Map<string, string>();
  let writes = 0;

  const live = (key: string): Entry | undefined => {
    const entry = entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt <= Date.now()) {
      entries.delete(key);
      return undefined;
    }
    return entry;
  };

  const sweep = (): void => {
    const now = Date.now();
    for (const [key, entry] of entries) if (entry.expiresAt <= now) entries.delete(key);
    for (const [grantId, keys] of byGrant) {
      for (const key of keys) if (!entries.has(key)) keys.delete(key);
      if (keys.size === 0) byGrant.delete(grantId);
    }
  };

  return (model) => {
    const keyOf = (id: string): string => `${model}:${id}`;
    return {
      async upsert(id, payload, expiresIn) {
        const key = keyOf(id);
        const expiresAt = typeof expiresIn === 'number' ? Date.now() + expiresIn * 1000 : Infinity;
        entries.set(key, { payload, expiresAt });
        if (typeof payload.grantId === 'string') {
          const keys = byGrant.get(payload.grantId) ?? new Set<string>();
          keys.add(key);
          byGrant.set(payload.grantId, keys);
        }
        if (model === 'Session' && typeof payload.uid === 'string') byUid.set(payload.uid, id);
        if (typeof payload.userCode === 'string') byUserCode.set(payload.userCode, id);
        writes += 1;
        if (writes % 1000 === 0) sweep();
      },
      async find(id) {
        return live(keyOf(id))?.payload;
      },
      async findByUid(uid) {
        const id = byUid.get(uid);
        return id === undefined ? undefined : live(keyOf(id))?.payload;
      },
      async findByUserCode(userCode) {
        const id = byUserCode.get(userCode);
        return id === undefined ? undefined : live(keyOf(id))?.payload;
      },
      async consume(id) {
        const entry = live(keyOf(id));
        if (entry !== undefined) entry.payload.consumed = Math.floor(Date.now() / 1000);
      },
      async destroy(id) {
        entries.delete(keyOf(id));
      },
      async revokeByGrantId(grantId) {
        for (const key of byGrant.get(grantId) ?? []) entries.delete(key);
        byGrant.delete(grantId);
      },
    };
  };
}
