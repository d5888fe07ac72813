import { afterEach, describe, expect, it } from 'vitest';
import { config, configure, resetConfig } from '../../../lib/oauth2/index.js';

afterEach(() => resetConfig());

describe('configure() / config', () => {
  it('has the documented defaults', () => {
    expect(config.silenceExtraTokensWarning).toBe(true);
    expect(config.silenceNoTokensWarning).toBe(true);
    expect(config.filteredLabel).toBe('[FILTERED]');
    expect(config.filteredDebugKeys).toEqual([
      'access_token',
      'refresh_token',
      'id_token',
      'client_secret',
      'assertion',
      'code_verifier',
      'token',
      'client_assertion',
      'code',
      'password',
    ]);
  });

  it("is readable under the spec's snake_case names, which Object.keys does not list", () => {
    expect(config.filtered_label).toBe('[FILTERED]');
    // biome-ignore lint/complexity/useLiteralKeys: the spec's bracket form is what is tested
    expect(config['filtered_debug_keys']).toBe(config.filteredDebugKeys);
    expect(config.silence_extra_tokens_warning).toBe(true);
    expect(Object.keys(config)).toEqual([
      'silenceExtraTokensWarning',
      'silenceNoTokensWarning',
      'filteredLabel',
      'filteredDebugKeys',
    ]);
  });

  it('changes settings through the block, by either name, and extends filtered keys by appending', () => {
    configure((c) => {
      c.filtered_label = '<hidden>';
      c.filteredDebugKeys.push('client_assertion_extra');
    });
    expect(config.filteredLabel).toBe('<hidden>');
    expect(config.filteredDebugKeys.at(-1)).toBe('client_assertion_extra');
  });

  it('rejects a bad setting with a TypeError naming it', () => {
    expect(() =>
      configure((c) => {
        c.filteredLabel = 1 as never;
      }),
    ).toThrow(new TypeError(`"filteredLabel" must be a string`));
    resetConfig();
    expect(() =>
      configure((c) => {
        c.silenceNoTokensWarning = 'no' as never;
      }),
    ).toThrow(new TypeError(`"silenceNoTokensWarning" must be a boolean`));
  });
});
