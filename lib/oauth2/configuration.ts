import { DEFAULT_FILTERED_DEBUG_KEYS } from './constants.js';

/** Global settings of the library (the gem's `OAuth2.config`). */
export interface OAuth2Config {
  /** Silences the warning for a token response with several token-like fields. Default `true`. */
  silenceExtraTokensWarning: boolean;
  /** Silences the warning for a token without any token. Default `true`. */
  silenceNoTokensWarning: boolean;
  /** Replaces secrets in inspected objects, errors and debug output. Default `'[FILTERED]'`. */
  filteredLabel: string;
  /**
   * Keys whose values are redacted in debug output, error messages and `inspect`. Default: the gem's
   * list (`access_token refresh_token id_token client_secret assertion code_verifier token`) plus
   * `client_assertion`, `code` and `password`. Append to extend it.
   */
  filteredDebugKeys: string[];
}

/** {@link OAuth2Config} readable (and writable) under the spec's snake_case names too. */
export type OAuth2ConfigWithAliases = OAuth2Config & {
  silence_extra_tokens_warning: boolean;
  silence_no_tokens_warning: boolean;
  filtered_label: string;
  filtered_debug_keys: string[];
};

function defaults(): OAuth2Config {
  return {
    silenceExtraTokensWarning: true,
    silenceNoTokensWarning: true,
    filteredLabel: '[FILTERED]',
    filteredDebugKeys: [...DEFAULT_FILTERED_DEBUG_KEYS],
  };
}

const ALIASES = {
  silence_extra_tokens_warning: 'silenceExtraTokensWarning',
  silence_no_tokens_warning: 'silenceNoTokensWarning',
  filtered_label: 'filteredLabel',
  filtered_debug_keys: 'filteredDebugKeys',
} as const satisfies Record<string, keyof OAuth2Config>;

function createConfig(): OAuth2ConfigWithAliases {
  const target = defaults() as OAuth2ConfigWithAliases;
  for (const [alias, name] of Object.entries(ALIASES)) {
    Object.defineProperty(target, alias, {
      enumerable: false,
      get: () => target[name],
      set: (value: never) => {
        target[name] = value;
      },
    });
  }
  return target;
}

/**
 * The global configuration object. Read it directly (`config.filteredLabel` or the spec's
 * `config['filtered_label']`); change it with {@link configure}.
 */
export const config: OAuth2ConfigWithAliases = createConfig();

function validate(): void {
  if (typeof config.silenceExtraTokensWarning !== 'boolean') {
    throw new TypeError(`"silenceExtraTokensWarning" must be a boolean`);
  }
  if (typeof config.silenceNoTokensWarning !== 'boolean') {
    throw new TypeError(`"silenceNoTokensWarning" must be a boolean`);
  }
  if (typeof config.filteredLabel !== 'string') throw new TypeError(`"filteredLabel" must be a string`);
  if (
    !Array.isArray(config.filteredDebugKeys) ||
    config.filteredDebugKeys.some((k) => typeof k !== 'string')
  ) {
    throw new TypeError(`"filteredDebugKeys" must be an array of strings`);
  }
}

/**
 * Changes the global configuration (the gem's `OAuth2.configure { |config| ... }`).
 *
 * @example
 * ```ts
 * configure((c) => {
 *   c.silenceExtraTokensWarning = false;
 *   c.filteredDebugKeys.push('my_secret_param');
 * });
 * ```
 */
export function configure(fn: (config: OAuth2ConfigWithAliases) => void): void {
  if (typeof fn !== 'function') throw new TypeError(`"fn" must be a function`);
  fn(config);
  validate();
}

/** Restores every setting to its default (useful in tests). */
export function resetConfig(): void {
  Object.assign(config, defaults());
}
