// The README is the front door: short, its examples the very files that other tests run (each block sits behind
// an `<!-- example: path -->` marker), and every relative link in it and in docs/ leads somewhere.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const readme = readFileSync(join(root, 'README.md'), 'utf8');
const blocks = [...readme.matchAll(/<!-- example: (\S+) -->\n\n```ts\n([\s\S]*?)\n```/g)].map((match) => ({
  path: match[1] as string,
  code: match[2] as string,
}));

const pages = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

/** The text outside fenced code blocks, where Markdown links and tables live. */
function prose(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```/gm, '');
}

/** GitHub's anchor for a heading: lowercase, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchors(path: string): Set<string> {
  const headings = prose(readFileSync(join(root, path), 'utf8')).matchAll(/^#{1,6} (.+)$/gm);
  return new Set([...headings].map((match) => slug(match[1] as string)));
}

/** Every relative link of a page that does not lead to an existing file (or heading). */
function brokenLinks(page: string): string[] {
  const broken: string[] = [];
  for (const match of prose(readFileSync(join(root, page), 'utf8')).matchAll(/\]\(([^)\s]+)\)/g)) {
    const target = match[1] as string;
    if (/^[a-z]+:/i.test(target)) continue;
    const [file = '', anchor] = target.split('#');
    const path = file === '' ? page : relative(root, join(root, dirname(page), file));
    if (!existsSync(join(root, path))) broken.push(target);
    else if (anchor !== undefined && path.endsWith('.md') && !anchors(path).has(anchor)) broken.push(target);
  }
  return broken;
}

describe('README', () => {
  it('stays a front door: at most 15 KB', () => {
    expect(Buffer.byteLength(readme)).toBeLessThanOrEqual(15 * 1024);
  });

  it('starts with the two commands', () => {
    expect(readme).toMatch(
      /^# forgebridge\n\n```sh\nbash scripts\/bootstrap\.sh && npm start .*\nbash scripts\/bootstrap\.sh && npm test .*\n```\n/,
    );
  });

  it('shows at least one example of each library and of lib/aws', () => {
    const paths = blocks.map((block) => block.path);
    for (const folder of ['examples/webhooks/', 'examples/oauth2/', 'examples/aws/']) {
      expect(paths.some((path) => path.startsWith(folder))).toBe(true);
    }
  });

  it.each(blocks)('shows $path exactly as the file is', ({ path, code }) => {
    expect(code).toBe(readFileSync(join(root, path), 'utf8').trimEnd());
  });
});

describe.each(pages)('%s', (page) => {
  it('links only to files and headings that exist', () => {
    expect(brokenLinks(page)).toEqual([]);
  });

  it('has no table padded with runs of spaces', () => {
    const rows = prose(readFileSync(join(root, page), 'utf8'))
      .split('\n')
      .filter((line) => line.startsWith('|') && / {2,}\|/.test(line));
    expect(rows).toEqual([]);
  });
});
