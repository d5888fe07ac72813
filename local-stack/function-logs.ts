// The functions' Powertools log lines, read back from osls offline's log file: how `npm start`'s user and the
// end-to-end tests see what each subscriber received, from outside the handlers.
import { closeSync, existsSync, openSync, readSync } from 'node:fs';

/** One JSON log line of a function (Powertools adds `function_name` through `injectLambdaContext`). */
export interface FunctionLogRecord {
  message: string;
  function_name: string;
  function_request_id?: string;
  [field: string]: unknown;
}

/** Reads a growing log file: each call parses only what was appended since the last one. */
export interface FunctionLogReader {
  /** Every function log record so far, oldest first. */
  records(): readonly FunctionLogRecord[];
}

function parse(line: string): FunctionLogRecord | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    const value = JSON.parse(line) as Partial<FunctionLogRecord> | null;
    return typeof value?.message === 'string' && typeof value.function_name === 'string'
      ? (value as FunctionLogRecord)
      : undefined;
  } catch {
    return undefined;
  }
}

/** Reads a growing text file line by line: each call returns only the complete lines appended since the last. */
export interface LineReader {
  lines(): string[];
}

/** A {@link LineReader} of `file`, which may not exist yet; a line without its newline is kept back until complete. */
export function createLineReader(file: string): LineReader {
  let offset = 0;
  let pending = Buffer.alloc(0);
  const chunk = Buffer.alloc(1 << 20);
  return {
    lines() {
      const lines: string[] = [];
      if (!existsSync(file)) return lines;
      const fd = openSync(file, 'r');
      try {
        for (;;) {
          const read = readSync(fd, chunk, 0, chunk.length, offset);
          if (read === 0) break;
          offset += read;
          const data = Buffer.concat([pending, chunk.subarray(0, read)]);
          const end = data.lastIndexOf(0x0a);
          pending = Buffer.from(end === -1 ? data : data.subarray(end + 1));
          if (end === -1) continue;
          lines.push(...data.subarray(0, end).toString('utf8').split('\n'));
        }
      } finally {
        closeSync(fd);
      }
      return lines;
    },
  };
}

/**
 * A reader of the function log lines in `file` (serverless-offline's own lines and anything not JSON are
 * skipped). The file may not exist yet; a line without its newline is kept back until it is complete.
 */
export function createFunctionLogReader(file: string): FunctionLogReader {
  const records: FunctionLogRecord[] = [];
  const reader = createLineReader(file);
  return {
    records() {
      for (const line of reader.lines()) {
        const record = parse(line.trim());
        if (record !== undefined) records.push(record);
      }
      return records;
    },
  };
}
