// The delivery-id and source-name rules: what they take, their wording, and that each is written once in the
// sources (lib/aws/rules.ts) and imported everywhere else, so no copy can drift from it.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_SOURCE,
  DELIVERY_ID_RULE,
  isDeliveryId,
  isSourceName,
  SOURCE_NAME_RULE,
} from '../../../lib/aws/core/index.js';

const ROOT = resolve(import.meta.dirname, '../../..');

function files(folder: string): string[] {
  const found: string[] = [];
  for (const name of readdirSync(join(ROOT, folder))) {
    const path = join(folder, name);
    if (name === 'node_modules' || name === 'generated' || name.startsWith('.')) continue;
    if (statSync(join(ROOT, path)).isDirectory()) found.push(...files(path));
    else if (/\.(ts|js|mjs|cjs|yml)$/.test(name)) found.push(path);
  }
  return found;
}

const SOURCES = ['lib', 'functions', 'infra', 'local-stack', 'scripts', 'bin'].flatMap(files);

/** The files whose text matches `pattern`, with the number of matches in each. */
function occurrences(pattern: RegExp): Record<string, number> {
  const found: Record<string, number> = {};
  for (const file of SOURCES) {
    const count = [...readFileSync(join(ROOT, file), 'utf8').matchAll(pattern)].length;
    if (count > 0) found[file] = count;
  }
  return found;
}

describe('isDeliveryId()', () => {
  it('takes 1 to 256 visible ascii characters', () => {
    expect(isDeliveryId('a')).toBe(true);
    expect(isDeliveryId('7d3a1f00-0c5e-11ef-8f0d-3f6a0ad1c2b7')).toBe(true);
    expect(isDeliveryId('!'.repeat(256))).toBe(true);
  });

  it('refuses an empty, too long, spaced, non-ascii or non-string id', () => {
    for (const id of ['', 'x'.repeat(257), 'with space', 'tab\t', 'é', 42, undefined, null]) {
      expect(isDeliveryId(id)).toBe(false);
    }
  });
});

describe('isSourceName()', () => {
  it('takes 1 to 64 lowercase letters, digits and inner hyphens', () => {
    for (const name of ['a', '0', 'gitlab-acme', `a${'-'.repeat(62)}b`, 'x'.repeat(64)]) {
      expect(isSourceName(name)).toBe(true);
    }
  });

  it('refuses a leading or trailing hyphen, capitals, other characters or more than 64 characters', () => {
    for (const name of ['', '-a', 'a-', 'Acme', 'a_b', 'a/b', 'x'.repeat(65), 7, undefined]) {
      expect(isSourceName(name)).toBe(false);
    }
  });
});

describe('the rules’ wording', () => {
  it('says what each rule takes', () => {
    expect(DELIVERY_ID_RULE).toBe('1 to 256 visible ascii characters');
    expect(SOURCE_NAME_RULE).toBe('1 to 64 lowercase letters, digits or inner hyphens (a url path segment)');
    expect(DEFAULT_SOURCE).toBe('default');
  });
});

describe('one home per rule', () => {
  it('writes the delivery-id pattern and its wording once (lib/aws/rules.ts)', () => {
    expect(occurrences(/x21-\\{0,2}x7e/g)).toEqual({ 'lib/aws/rules.ts': 1 });
    expect(occurrences(/visible ascii/gi)).toEqual({ 'lib/aws/rules.ts': 1 });
  });

  it('writes the source-name pattern and its wording once (lib/aws/rules.ts)', () => {
    expect(occurrences(/\[a-z0-9-\]\{0,62\}/g)).toEqual({ 'lib/aws/rules.ts': 1 });
    expect(occurrences(/lowercase letters, digits/gi)).toEqual({ 'lib/aws/rules.ts': 1 });
  });

  it('names the default source once', () => {
    expect(occurrences(/DEFAULT_WEBHOOK_SOURCE/g)).toEqual({});
    expect(occurrences(/DEFAULT_SOURCE = /g)).toEqual({ 'lib/aws/rules.ts': 1 });
  });
});
