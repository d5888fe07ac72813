// Runs before every test file of both projects: records everything the file's code writes to the console,
// standard output and standard error (Powertools Logger, OAUTH_DEBUG output, warnings, ...), passes it on
// unchanged, and fails the file in `afterAll` when any of it holds a secret or a token:
// - a value registered with `registerSecret()` (test/helpers/secrets.ts) or a well-known test secret;
// - anything shaped like a credential that escaped redaction: a JWT, a `Bearer`/`Basic` credential, or an
//   OAuth token field (`access_token`, `client_secret`, ...) whose value is not the filtered label.
// The failure names the file and the kind of leak, never the leaked value itself.
import { afterAll } from 'vitest';
import { findLeak, registeredSecrets } from '../helpers/secrets.js';

// The unit project runs its files in one module context (`isolate: false` in vitest.config.ts), where this file
// runs again before each of them: the streams and the console are wrapped once per process, and each file gets its
// own fresh capture.
interface Guard {
  captured: string[];
}
const GUARD = Symbol.for('forgebridge.test.logGuard');
const holder = globalThis as typeof globalThis & { [GUARD]?: Guard };
const guard: Guard = holder[GUARD] ?? install();
guard.captured = [];

function install(): Guard {
  const installed: Guard = { captured: [] };
  holder[GUARD] = installed;
  const capture = (chunk: unknown): void => {
    if (typeof chunk === 'string') installed.captured.push(chunk);
    else if (chunk instanceof Uint8Array) installed.captured.push(Buffer.from(chunk).toString('utf8'));
  };
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
  return installed;
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
  const { captured } = guard;
  guard.captured = [];
  for (const text of captured) {
    const leak = findLeak(text, registeredSecrets());
    if (leak !== undefined) leaks.add(leak);
  }
  if (leaks.size > 0) {
    throw new Error(`a log line of this test file holds ${[...leaks].join(' and ')} (value not shown)`);
  }
});
