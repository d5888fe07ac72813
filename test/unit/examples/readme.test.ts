// The README shows example files verbatim; each block sits behind an `<!-- example: path -->` marker.
// This keeps the README and the files (which other tests run) from drifting apart.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const root = new URL('../../../', import.meta.url);
const readme = readFileSync(new URL('README.md', root), 'utf8');
const blocks = [...readme.matchAll(/<!-- example: (\S+) -->\n\n```ts\n([\s\S]*?)\n```/g)].map((match) => ({
  path: match[1] as string,
  code: match[2] as string,
}));

describe('README examples', () => {
  it('shows at least one example of each library', () => {
    const paths = blocks.map((block) => block.path);
    expect(paths.some((path) => path.startsWith('examples/webhooks/'))).toBe(true);
    expect(paths.some((path) => path.startsWith('examples/oauth2/'))).toBe(true);
  });

  it.each(blocks)('shows $path exactly as the file is', ({ path, code }) => {
    expect(code).toBe(readFileSync(new URL(path, root), 'utf8').trimEnd());
  });
});
