// `npm run bench oauth2`: client_credentials round trips per second of our client, openid-client 6 and
// simple-oauth2 5, against ONE local oidc-provider started here, with the same client (client_secret_basic),
// keep-alive connections for all three, warm-up first, then interleaved rounds (the order rotates each
// round) so drift in the machine's speed hits every library alike. Figures are medians over the rounds.
import { Agent as HttpAgent } from 'node:http';
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { allowInsecureRequests, ClientSecretBasic, clientCredentialsGrant, discovery } from 'openid-client';
import { Client } from '../lib/oauth2/index.js';
import { startAuthorizationServer } from '../local-stack/authorization-server.js';

const CLIENT_ID = 'bench-client';
const CLIENT_SECRET = 'bench-client-secret';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const CALLS = Number(process.env.BENCH_CALLS ?? 300);
const WARMUP = 200;
const CONCURRENCY = [1, 16] as const;
const TARGET = 1.3;

type Fetcher = () => Promise<string>;

interface SimpleOAuth2ClientCredentials {
  getToken(params: Record<string, unknown>): Promise<{ token: { access_token?: string } }>;
}
interface SimpleOAuth2Module {
  ClientCredentials: new (config: Record<string, unknown>) => SimpleOAuth2ClientCredentials;
}

function versionOf(name: string): string {
  const require = createRequire(import.meta.url);
  try {
    return (require(`${name}/package.json`) as { version: string }).version;
  } catch {
    return '?';
  }
}

async function runBatch(fetchToken: Fetcher, calls: number, concurrency: number): Promise<number> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < calls) {
      next += 1;
      const token = await fetchToken();
      if (token.length === 0) throw new Error('empty access token');
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  return calls / ((performance.now() - started) / 1000);
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

export default async function bench(): Promise<void> {
  const server = await startAuthorizationServer({
    devInteractions: false,
    clients: [
      {
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        grant_types: ['client_credentials'],
        response_types: [],
        redirect_uris: [],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
  });
  const keepAlive = new HttpAgent({ keepAlive: true });
  try {
    // Ours: its default transport (Node's http on a keep-alive agent), token endpoint = site + the gem's default 'oauth/token'.
    const ours = new Client(CLIENT_ID, CLIENT_SECRET, { site: server.issuer });
    // openid-client: discovery once, then the grant; http on loopback needs allowInsecureRequests.
    const config = await discovery(
      new URL(server.issuer),
      CLIENT_ID,
      undefined,
      ClientSecretBasic(CLIENT_SECRET),
      {
        execute: [allowInsecureRequests],
      },
    );
    // simple-oauth2 (no types, CommonJS): wreck's default agent does not keep connections alive; give it one.
    const { ClientCredentials } = createRequire(import.meta.url)('simple-oauth2') as SimpleOAuth2Module;
    const simple = new ClientCredentials({
      client: { id: CLIENT_ID, secret: CLIENT_SECRET },
      auth: { tokenHost: server.issuer, tokenPath: '/oauth/token' },
      http: { agent: keepAlive },
    });

    const libraries: Array<{ name: string; ours: boolean; fetchToken: Fetcher }> = [
      {
        name: 'forgebridge lib/oauth2',
        ours: true,
        fetchToken: async () => (await ours.clientCredentials.getToken({})).token,
      },
      {
        name: `openid-client ${versionOf('openid-client')}`,
        ours: false,
        fetchToken: async () => (await clientCredentialsGrant(config)).access_token,
      },
      {
        name: `simple-oauth2 ${versionOf('simple-oauth2')}`,
        ours: false,
        fetchToken: async () => (await simple.getToken({})).token.access_token ?? '',
      },
    ];

    for (const library of libraries) await runBatch(library.fetchToken, WARMUP, 1);
    server.resetCounters();

    const rates = new Map<string, number[]>();
    for (const concurrency of CONCURRENCY) {
      for (let round = 0; round < ROUNDS; round += 1) {
        for (let index = 0; index < libraries.length; index += 1) {
          const library = libraries[(index + round) % libraries.length]!;
          const key = `${library.name}@${concurrency}`;
          rates.set(key, [...(rates.get(key) ?? []), await runBatch(library.fetchToken, CALLS, concurrency)]);
        }
      }
    }
    const expected = ROUNDS * CALLS * libraries.length * CONCURRENCY.length;
    if (server.tokenRequests('client_credentials') !== expected) {
      throw new Error(
        `server saw ${server.tokenRequests('client_credentials')} token requests, expected ${expected}`,
      );
    }

    console.log(
      `client_credentials round trips/s against oidc-provider ${versionOf('oidc-provider')} (in-process, 127.0.0.1, keep-alive);`,
    );
    console.log(
      `median of ${ROUNDS} interleaved rounds x ${CALLS} calls, after ${WARMUP} warm-up calls each\n`,
    );
    const header = ['library', ...CONCURRENCY.map((c) => `${c} in flight`)];
    const rows = libraries.map((library) => [
      library.name,
      ...CONCURRENCY.map((c) => median(rates.get(`${library.name}@${c}`) ?? []).toFixed(0)),
    ]);
    const verdicts = CONCURRENCY.map((c) => {
      const ourRate = median(rates.get(`${libraries[0]!.name}@${c}`) ?? []);
      const peer = Math.max(...libraries.slice(1).map((l) => median(rates.get(`${l.name}@${c}`) ?? [])));
      const ratio = ourRate / peer;
      return `${ratio.toFixed(2)}x ${ratio >= TARGET ? 'PASS' : 'FAIL'}`;
    });
    rows.push([`ours / faster peer (target >= ${TARGET}x)`, ...verdicts]);
    const widths = header.map((_, column) =>
      Math.max(...[header, ...rows].map((row) => row[column]!.length)),
    );
    const line = (row: string[]): string =>
      row
        .map((cell, column) => (column === 0 ? cell.padEnd(widths[0]!) : cell.padStart(widths[column]!)))
        .join('  ');
    console.log(line(header));
    for (const row of rows) console.log(line(row));
  } finally {
    keepAlive.destroy();
    await server.stop();
  }
}
