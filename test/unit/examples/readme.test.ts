// The README is the front door: short, its examples the very files that other tests run (each block sits behind
// an `<!-- example: path -->` marker), and every relative link in it and in docs/ leads to a file of the repository
// and, with an #anchor, to a heading of it.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, relative } from 'node:path';
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

/** The anchors of a page's headings, a repeated heading numbered the way GitHub numbers it (`-1`, `-2`, ...). */
function anchors(path: string): Set<string> {
  const seen = new Set<string>();
  for (const match of prose(readFileSync(join(root, path), 'utf8')).matchAll(/^#{1,6} (.+)$/gm)) {
    const base = slug(match[1] as string);
    let anchor = base;
    for (let n = 1; seen.has(anchor); n += 1) anchor = `${base}-${n}`;
    seen.add(anchor);
  }
  return seen;
}

/** The link targets of a page's text: inline links and images, and reference definitions (`[name]: target`). */
function targets(markdown: string): string[] {
  const text = prose(markdown);
  const inline = [...text.matchAll(/\]\(<?([^)\s>]+)>?(?:\s+"[^"]*")?\)/g)].map(
    (match) => match[1] as string,
  );
  const references = [...text.matchAll(/^ {0,3}\[[^\]]+\]:\s*<?([^\s>]+)>?/gm)].map(
    (match) => match[1] as string,
  );
  return [...inline, ...references];
}

/**
 * Every relative link of a page (at `page`, with the text `markdown`) that does not lead to an existing file of the
 * repository, or to an existing heading of a Markdown file.
 */
function brokenLinks(page: string, markdown = readFileSync(join(root, page), 'utf8')): string[] {
  const broken: string[] = [];
  for (const target of targets(markdown)) {
    if (/^[a-z]+:/i.test(target)) continue;
    const [file = '', anchor] = target.split('#');
    const path = file === '' ? page : relative(root, join(root, dirname(page), file));
    if (path.startsWith('..') || isAbsolute(path) || !existsSync(join(root, path))) broken.push(target);
    else if (anchor !== undefined && path.endsWith('.md') && !anchors(path).has(anchor)) broken.push(target);
  }
  return broken;
}

/** Names of what lives outside the repository: internal notes a reader of the docs cannot open. */
const OUTSIDE = /\bspec\/|\.\.\/shared|DESIGN\.md|REFERENCE\.md/g;

describe('the link check', () => {
  it('passes a link to an existing file and heading, on the page or another', () => {
    expect(
      brokenLinks('docs/aws.md', '[a](aws.md#composition-roots) [b](#the-pages) [c](../README.md)'),
    ).toEqual([]);
  });

  it('fails a broken anchor, a missing file and a path out of the repository', () => {
    const text =
      '[a](aws.md#no-such-heading)\n[b](no-such-page.md)\n[c](../../shared/DESIGN.md)\n\n[d]: <missing.md>';
    expect(brokenLinks('docs/aws.md', text)).toEqual([
      'aws.md#no-such-heading',
      'no-such-page.md',
      '../../shared/DESIGN.md',
      'missing.md',
    ]);
  });

  it('checks a link with a title or in angle brackets like any other', () => {
    expect(brokenLinks('docs/aws.md', '[a](aws-ingest.md#subscribers "title") [b](<#subscribers>)')).toEqual([
      '#subscribers',
    ]);
  });
});

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

  it('names no file outside the repository', () => {
    expect(prose(readFileSync(join(root, page), 'utf8')).match(OUTSIDE) ?? []).toEqual([]);
  });

  it('has no table padded with runs of spaces', () => {
    const rows = prose(readFileSync(join(root, page), 'utf8'))
      .split('\n')
      .filter((line) => line.startsWith('|') && / {2,}\|/.test(line));
    expect(rows).toEqual([]);
  });
});
