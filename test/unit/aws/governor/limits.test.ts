import { describe, expect, it } from 'vitest';
import {
  countsAgainst,
  ForgeLimitPresetNames,
  ForgeLimitPresets,
  formatBudgets,
  parseBudgets,
  readGovernorConfig,
} from '../../../../lib/aws/governor/limits.js';

describe('parseBudgets', () => {
  it('reads scopes, limits, windows and bursts, and writes them back the same', () => {
    const text = 'writes:80/60s, writes:500/3600s~420, all:1000/3600s~500';
    const budgets = parseBudgets(text);
    expect(budgets).toEqual([
      { scope: 'writes', limit: 80, seconds: 60, burst: 1 },
      { scope: 'writes', limit: 500, seconds: 3600, burst: 420 },
      { scope: 'all', limit: 1000, seconds: 3600, burst: 500 },
    ]);
    expect(formatBudgets(budgets)).toBe(text);
    expect(parseBudgets('none')).toEqual([]);
    expect(parseBudgets('  ')).toEqual([]);
    expect(formatBudgets([])).toBe('none');
  });

  it.each([
    ['reads:5/60s', /is not a budget/],
    ['writes:80/60', /is not a budget/],
    ['writes:80/60s,', /is not a budget/],
    ['writes:1/60s', /limit of at least 2/],
    ['writes:80/0s', /window of at least 1 s/],
    ['writes:80/60s~80', /burst from 1 to below its limit/],
    ['writes:80/60s~0', /burst from 1 to below its limit/],
  ])('refuses %s with a line naming the setting', (text, message) => {
    expect(() => parseBudgets(text, 'FORGEBRIDGE_FORGE_API_BUDGETS')).toThrow(message);
    expect(() => parseBudgets(text, 'FORGEBRIDGE_FORGE_API_BUDGETS')).toThrow(
      /"FORGEBRIDGE_FORGE_API_BUDGETS"/,
    );
  });
});

describe('countsAgainst', () => {
  it('counts the content-creating methods against writes budgets, every method against all', () => {
    expect(['POST', 'patch', 'PUT', 'DELETE'].map((m) => countsAgainst('writes', m))).toEqual([
      true,
      true,
      true,
      true,
    ]);
    expect(['GET', 'head', 'OPTIONS'].map((m) => countsAgainst('writes', m))).toEqual([false, false, false]);
    expect(countsAgainst('all', 'GET')).toBe(true);
  });
});

describe('the presets', () => {
  it('give every forge its limits and the page they come from, within what the budgets allow', () => {
    for (const name of ForgeLimitPresetNames) {
      const preset = ForgeLimitPresets[name];
      expect(preset.concurrency).toBeGreaterThan(0);
      if (name !== 'generic') expect(preset.source).toMatch(/^https:\/\//);
      // Each preset's budgets read back through the parser unchanged.
      expect(parseBudgets(formatBudgets(preset.budgets))).toEqual(preset.budgets);
    }
    expect(ForgeLimitPresets.github.concurrency).toBe(100);
    expect(formatBudgets(ForgeLimitPresets.github.budgets)).toBe('writes:80/60s, writes:500/3600s~420');
  });
});

describe('readGovernorConfig', () => {
  it("is on, on GitHub's limits, by default", () => {
    const config = readGovernorConfig({});
    expect(config).toMatchObject({ enabled: true, preset: 'github', maxWaitMs: 60_000, leaseSeconds: 30 });
    expect(config.limits).toEqual({
      concurrency: 100,
      budgets: ForgeLimitPresets.github.budgets,
    });
    // A copy: a caller changing it changes no preset.
    expect(config.limits.budgets[0]).not.toBe(ForgeLimitPresets.github.budgets[0]);
  });

  it('takes a preset and overrides of its figures, and the switch', () => {
    const config = readGovernorConfig({
      FORGEBRIDGE_FORGE_API_GOVERNOR: 'off',
      FORGEBRIDGE_FORGE_API_PRESET: 'bitbucket',
      FORGEBRIDGE_FORGE_API_CONCURRENCY: '10',
      FORGEBRIDGE_FORGE_API_BUDGETS: 'writes:8/6s',
      FORGEBRIDGE_FORGE_API_MAX_WAIT_MS: '25000',
      FORGEBRIDGE_FORGE_API_LEASE_SECONDS: '12',
    });
    expect(config).toEqual({
      enabled: false,
      preset: 'bitbucket',
      limits: { concurrency: 10, budgets: [{ scope: 'writes', limit: 8, seconds: 6, burst: 1 }] },
      maxWaitMs: 25_000,
      leaseSeconds: 12,
    });
    expect(readGovernorConfig({ FORGEBRIDGE_FORGE_API_PRESET: 'gitea' }).limits.budgets).toEqual([]);
  });

  it.each([
    [{ FORGEBRIDGE_FORGE_API_GOVERNOR: 'yes' }, /"FORGEBRIDGE_FORGE_API_GOVERNOR" must be "on" or "off"/],
    [
      { FORGEBRIDGE_FORGE_API_PRESET: 'sourcehut' },
      /"FORGEBRIDGE_FORGE_API_PRESET" must be one of github, gitlab/,
    ],
    [
      { FORGEBRIDGE_FORGE_API_CONCURRENCY: '2.5' },
      /"FORGEBRIDGE_FORGE_API_CONCURRENCY" must be a whole number/,
    ],
    [
      { FORGEBRIDGE_FORGE_API_CONCURRENCY: '0' },
      /"FORGEBRIDGE_FORGE_API_CONCURRENCY" must be a positive number/,
    ],
    [{ FORGEBRIDGE_FORGE_API_BUDGETS: 'lots' }, /"FORGEBRIDGE_FORGE_API_BUDGETS": "lots" is not a budget/],
    [
      { FORGEBRIDGE_FORGE_API_CONCURRENCY: '1001' },
      /"FORGEBRIDGE_FORGE_API_CONCURRENCY" must be a whole number from 1 to 1000/,
    ],
    [
      { FORGEBRIDGE_FORGE_API_BUDGETS: 'writes:2/1s, writes:3/1s, writes:4/1s, writes:5/1s, all:6/1s' },
      /"FORGEBRIDGE_FORGE_API_BUDGETS" holds at most 4 budgets/,
    ],
  ])('refuses %o', (env, message) => {
    expect(() => readGovernorConfig(env)).toThrow(message);
  });
});
