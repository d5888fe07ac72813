// Secrets and tokens that no log line may contain, checked by test/setup/log-guard.ts after every test file.

const KEY = Symbol.for('forgebridge.test.secrets');
type Registry = Set<string>;

function registry(): Registry {
  const holder = globalThis as { [KEY]?: Registry };
  holder[KEY] ??= new Set<string>([
    // Well-known secrets of the local servers and the test suites.
    'forgebridge-development-secret',
    'cs-Sup3r+Secret %:&',
    'web-app-secret',
    'forgebridge-local-secret',
  ]);
  return holder[KEY];
}

/** Registers values that must never reach a log line in the current test file. */
export function registerSecret(...values: (string | undefined)[]): void {
  for (const value of values) if (value !== undefined && value.length > 0) registry().add(value);
}

/** The registered values. */
export function registeredSecrets(): ReadonlySet<string> {
  return registry();
}
