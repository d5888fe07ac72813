import { chmodSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { CliError } from './errors.js';

const READ_ERRORS: Record<string, string> = {
  ENOENT: 'no such file',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EISDIR: 'it is a directory',
};

/** A file's bytes, or `-` for stdin; a one-line `CliError` when it cannot be read. */
export async function readInput(path: string): Promise<Buffer> {
  if (path === '-') {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(Buffer.from(chunk as Uint8Array));
    return Buffer.concat(chunks);
  }
  try {
    return await readFile(path);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    const reason = typeof code === 'string' ? (READ_ERRORS[code] ?? code.toLowerCase()) : 'read failed';
    throw new CliError(`cannot read "${path}": ${reason}`);
  }
}

/** A payload file: its exact bytes and the JSON object they hold; a `CliError` when it is not one. */
export async function readPayloadFile(
  path: string,
): Promise<{ bytes: Buffer; payload: Record<string, unknown> }> {
  const bytes = await readInput(path);
  let payload: unknown;
  try {
    payload = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new CliError(`"${path}" is not valid JSON`);
  }
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) {
    throw new CliError(`"${path}" must hold a JSON object`);
  }
  return { bytes, payload: payload as Record<string, unknown> };
}

/**
 * Writes `text` to `path` readable by its owner only, whatever the file was before: written beside it with mode
 * 0600, then renamed over it (an existing file's own mode would survive a plain write).
 */
export function writePrivateFile(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  const temporary = join(dirname(path), `.${basename(path)}.${process.pid}.${Date.now()}.tmp`);
  try {
    writeFileSync(temporary, text, { mode: 0o600, flag: 'wx' });
    // The umask may have taken bits from the mode on create: set it exactly.
    chmodSync(temporary, 0o600);
    renameSync(temporary, path);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
}
