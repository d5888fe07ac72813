// Every JSON answer of the CLI ends with a newline: one writer (printJson) does it, and every `--json` path of a
// command goes through it (a shell's `$(...)`, `jq` and a file concatenation all expect the final newline).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { paint, printJson } from '../../../lib/cli/output.js';

const CLI = new URL('../../../lib/cli/', import.meta.url).pathname;

afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

describe('printJson()', () => {
  it('writes the value as indented JSON ending with one newline', () => {
    const write = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    printJson({ delivery: 'd-1', ok: true, list: [1, 2] });
    printJson([]);
    expect(write.mock.calls.map(([text]) => text)).toEqual([
      '{\n  "delivery": "d-1",\n  "ok": true,\n  "list": [\n    1,\n    2\n  ]\n}\n',
      '[]\n',
    ]);
  });
});

describe('the `--json` paths of lib/cli', () => {
  const files = readdirSync(join(CLI, 'commands')).map((name) => join('commands', name));

  it('write to stdout only through output.ts (print and printJson end every line)', () => {
    for (const file of [...readdirSync(CLI).filter((name) => name.endsWith('.ts')), ...files]) {
      if (file === 'output.ts') continue;
      expect({
        file,
        writes: readFileSync(join(CLI, file), 'utf8').includes('process.stdout.write'),
      }).toEqual({
        file,
        writes: false,
      });
    }
  });

  it('print every `--json` answer with printJson', () => {
    const withJson = files.filter((file) => readFileSync(join(CLI, file), 'utf8').includes("'--json'"));
    expect(withJson).toEqual(
      expect.arrayContaining([
        'commands/deliveries.ts',
        'commands/reconcile.ts',
        'commands/replay.ts',
        'commands/rules.ts',
        'commands/send.ts',
        'commands/verify.ts',
      ]),
    );
    for (const file of withJson) {
      const text = readFileSync(join(CLI, file), 'utf8');
      const calls = [...text.matchAll(/if \(options\.json(?: === true)?\) \{?\s*([A-Za-z]+)\(/g)].map(
        (match) => match[1],
      );
      expect(calls.length).toBeGreaterThan(0);
      expect({ file, calls }).toEqual({ file, calls: calls.map(() => 'printJson') });
    }
  });
});

describe('paint()', () => {
  it('leaves a pipe plain unless FORCE_COLOR asks (Node 20 styleText colours whatever the stream)', () => {
    const pipe = { isTTY: false } as NodeJS.WriteStream;
    vi.stubEnv('FORCE_COLOR', undefined);
    expect(paint('red', 'text', pipe)).toBe('text');
  });

  it('leaves a terminal that takes no colours plain', () => {
    const terminal = { isTTY: true, hasColors: () => false } as unknown as NodeJS.WriteStream;
    expect(paint('red', 'text', terminal)).toBe('text');
  });
});
