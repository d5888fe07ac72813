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

const FILTERED = '[FILTERED]';
const TOKEN_FIELDS =
  'access_token|refresh_token|id_token|client_secret|client_assertion|assertion|code_verifier|password';
const shapes: { kind: string; pattern: RegExp }[] = [
  { kind: 'a JWT', pattern: /eyJ[\w-]{8,}\.eyJ[\w-]{8,}\.[\w-]{8,}/ },
  { kind: 'a Bearer credential', pattern: /\bBearer\s+(?!\[FILTERED\])[\w.~+/=-]{8,}/i },
  { kind: 'a Basic credential', pattern: /\bBasic\s+(?!\[FILTERED\])[A-Za-z0-9+/]{8,}={0,2}/ },
  {
    kind: 'an unredacted token field',
    pattern: new RegExp(
      `(?:^|[^\\w])(?:${TOKEN_FIELDS})"?\\s*[:=]\\s*"?(?!\\[FILTERED\\]|null|undefined)[^"&\\s,}]{6,}`,
      'i',
    ),
  },
];

/** What leaked in `text`, or undefined: the kind only, never the value. */
export function findLeak(text: string, secrets: Iterable<string>): string | undefined {
  for (const secret of secrets) if (secret.length >= 6 && text.includes(secret)) return 'a registered secret';
  const unfiltered = text.replaceAll(FILTERED, '');
  for (const { kind, pattern } of shapes) if (pattern.test(unfiltered)) return kind;
  return undefined;
}
