// local-stack/function-logs.ts: the functions' Powertools lines read back from a growing osls offline log.
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createFunctionLogReader } from '../../../local-stack/function-logs.js';

let dir: string;
let file: string;
const line = (fields: Record<string, unknown>) => `${JSON.stringify(fields)}\n`;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'forgebridge-function-logs-'));
  file = join(dir, 'offline.log');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('createFunctionLogReader()', () => {
  it('reads nothing before the file exists', () => {
    expect(createFunctionLogReader(file).records()).toEqual([]);
  });

  it('keeps only JSON lines with a message and a function name', () => {
    appendFileSync(file, 'Server ready: http://127.0.0.1:3000 🚀\n');
    appendFileSync(file, '(λ: onPush) RequestId: r-1  Duration: 3.1 ms\n');
    appendFileSync(file, '{"not json\n');
    appendFileSync(file, line({ message: 'no function' }));
    appendFileSync(file, line({ message: 'delivery received', function_name: 'fb-onPush', delivery: 'd-1' }));
    expect(createFunctionLogReader(file).records()).toEqual([
      { message: 'delivery received', function_name: 'fb-onPush', delivery: 'd-1' },
    ]);
  });

  it('parses only what was appended since the last call, and holds back a line until its newline', () => {
    const reader = createFunctionLogReader(file);
    const first = line({ message: 'a', function_name: 'f' });
    const second = line({ message: 'b', function_name: 'f', text: 'ünïcödé' });
    appendFileSync(file, first);
    expect(reader.records().map((record) => record.message)).toEqual(['a']);
    appendFileSync(file, second.slice(0, 12));
    expect(reader.records().map((record) => record.message)).toEqual(['a']);
    appendFileSync(file, second.slice(12));
    expect(reader.records()).toEqual([
      { message: 'a', function_name: 'f' },
      { message: 'b', function_name: 'f', text: 'ünïcödé' },
    ]);
  });

  it('reads a log larger than its read buffer whole', () => {
    const many = Array.from({ length: 20_000 }, (_, index) =>
      line({ message: 'delivery received', function_name: 'f', delivery: `d-${index}`, pad: 'x'.repeat(40) }),
    ).join('');
    expect(Buffer.byteLength(many)).toBeGreaterThan(1 << 20);
    appendFileSync(file, many);
    const records = createFunctionLogReader(file).records();
    expect(records).toHaveLength(20_000);
    expect(records.at(-1)?.delivery).toBe('d-19999');
  });
});
