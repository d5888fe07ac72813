// Runs before every test file of both projects: records everything the file's code writes to the console,
// standard output and standard error (Powertools Logger, OAUTH_DEBUG output, warnings, ...), passes it on
// unchanged, and fails the file in `afterAll` when any of it holds a secret or a token:
// - a value registered with `registerSecret()` (test/helpers/secrets.ts) or a well-known test secret;
// - anything shaped like a credential that escaped redaction: a JWT, a `Bearer`/`Basic` credential, or an
//   OAuth token field (`access_token`, `client_secret`, ...) whose value is not the filtered label.
// The failure names the file and the kind of leak, never the leaked value itself.
import { afterAll } from 'vitest';
import { findLeak, registeredSecrets } from '../helpers/secrets.js';

const captured: string[] = [];

function capture(chunk: unknown): void {
  if (typeof chunk === 'string') captured.push(chunk);
  else if (chunk instanceof Uint8Array) captured.push(Buffer.from(chunk).toString('utf8'));
}

for (const stream of [process.stdout, process.stderr]) {
  const write = stream.write.bind(stream) as (...args: unknown[]) => boolean;
  stream.write = ((chunk: unknown, ...rest: unknown[]) => {
    capture(chunk);
    return write(chunk, ...rest);
  }) as typeof stream.write;
}
for (const method of ['log', 'info', 'warn', 'error', 'debug', 'trace'] as const) {
  const original = console[method].bind(console);
  console[method] = (...args: unknown[]) => {
    capture(args.map((arg) => (typeof arg === 'string' ? arg : safeString(arg))).join(' '));
    original(...args);
  };
}

function safeString(value: unknown): string {
  try {
    return typeof value === 'object' ? JSON.stringify(value) : String(value);
  } catch {
    return String(value);
  }
}

afterAll(() => {
  const leaks = new Set<string>();
  for (const text of captured) {
    const leak = findLeak(text, registeredSecrets());
    if (leak !== undefined) leaks.add(leak);
  }
  captured.length = 0;
  if (leaks.size > 0) {
    throw new Error(`a log line of this test file holds ${[...leaks].join(' and ')} (value not shown)`);
  }
});
