/**
 * Writes a source's `hook` into a stage file (`config/<stage>.yml`) the way a person would: through the YAML
 * document, so every comment, the order of the keys and each list's layout stay as they were, and only the
 * named source's entry of `FORGEBRIDGE_WEBHOOK_SOURCES` gains (or has replaced) its `hook`. The result is read
 * back with the stage parser and the ingest's reader before it is written, so a file it writes always deploys.
 */
import { chmodSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { isMap, isSeq, parseDocument } from 'yaml';
import { readIngestConfig } from '../aws/internal.js';
import { parseStageFile, stageDefaults } from '../aws/stage/index.js';
import { CliError } from './errors.js';

/** A hook as a source names it (lib/aws's `hook` object): only the fields its kind needs. */
export type HookEntry = Record<string, string | number>;

/**
 * The stage file's text with `hook` set on source `source`.
 *
 * @throws CliError when the file has no `FORGEBRIDGE_WEBHOOK_SOURCES` list, no such source, or the result would
 * not be a valid stage file.
 */
export function withHook(text: string, file: string, source: string, hook: HookEntry): string {
  const document = parseDocument(text, { uniqueKeys: true });
  if (document.errors.length > 0) throw new CliError(`${file}: not valid YAML`);
  const sources = document.get('FORGEBRIDGE_WEBHOOK_SOURCES', true);
  if (!isSeq(sources)) {
    throw new CliError(
      `${file} has no "FORGEBRIDGE_WEBHOOK_SOURCES" list to write the hook into: list the stage's sources there (docs/configuration.md)`,
    );
  }
  const entry = sources.items.find((item) => isMap(item) && item.get('name') === source);
  if (!isMap(entry)) {
    throw new CliError(`${file} lists no source "${source}" in "FORGEBRIDGE_WEBHOOK_SOURCES"`);
  }
  entry.set('hook', document.createNode(hook));
  // No folding: a flow entry (`- { name: github, … }`) stays on its line, every other line as it was.
  const written = document.toString({ lineWidth: 0 });
  try {
    const values = parseStageFile(written, file);
    readIngestConfig({
      ...stageDefaults('local'),
      FORGEBRIDGE_WEBHOOK_SOURCES: values.FORGEBRIDGE_WEBHOOK_SOURCES ?? '',
      IS_OFFLINE: 'true',
    });
  } catch (error) {
    throw new CliError(`${file} left unchanged: ${(error as Error).message}`);
  }
  return written;
}

/** Reads `file`, sets the hook and writes it back in place (write beside it, then rename; its mode kept). */
export function writeHook(file: string, source: string, hook: HookEntry): void {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    throw new CliError(`cannot read "${file}": the stage file must exist (pass "--dir <project>")`);
  }
  const written = withHook(text, file, source, hook);
  if (written === text) return;
  const temporary = join(dirname(file), `.${basename(file)}.${process.pid}.tmp`);
  try {
    writeFileSync(temporary, written, { flag: 'wx' });
    chmodSync(temporary, statSync(file).mode & 0o777);
    renameSync(temporary, file);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw new CliError(`cannot write "${file}": ${(error as { code?: string }).code ?? 'write failed'}`);
  }
}
