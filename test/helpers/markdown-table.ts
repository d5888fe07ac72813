// Reads a table out of a docs/ page, for the tests that check the code does what a table says.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..', '..');

/**
 * The rows of the first table under the heading `heading` (matched exactly, without the `#`s) of a docs page,
 * each as its cells' text (trimmed; `\|` unescaped); the header and the separator row are left out.
 */
export function markdownTable(page: string, heading: string): string[][] {
  const lines = readFileSync(join(root, page), 'utf8').split('\n');
  const start = lines.findIndex((line) => /^#+ /.test(line) && line.replace(/^#+ /, '') === heading);
  if (start === -1) throw new Error(`no heading "${heading}" in ${page}`);
  const rows: string[][] = [];
  let inTable = false;
  for (const line of lines.slice(start + 1)) {
    if (/^#+ /.test(line)) break;
    if (!line.startsWith('|')) {
      if (inTable) break;
      continue;
    }
    inTable = true;
    const cells = line
      .slice(1, line.trimEnd().endsWith('|') ? line.trimEnd().length - 1 : undefined)
      .split(/(?<!\\)\|/)
      .map((cell) => cell.trim().replaceAll('\\|', '|'));
    rows.push(cells);
  }
  if (rows.length < 2) throw new Error(`no table under "${heading}" in ${page}`);
  return rows.slice(2);
}

/** The text of each code span of a cell, in order. */
export function codeSpans(cell: string): string[] {
  return [...cell.matchAll(/`([^`]+)`/g)].map((match) => match[1] as string);
}
