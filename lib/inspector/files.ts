// The inspector page's files (./public: no CDN, works offline), read once and served from memory.
import { readdirSync, readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SECURITY_HEADERS } from './http.js';

const PUBLIC_DIR = fileURLToPath(new URL('./public/', import.meta.url));
const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/** The page's files by path (`/` is `index.html`). */
export type PageFiles = ReadonlyMap<string, { body: Buffer; type: string }>;

/** Reads the page's files. */
export function loadPageFiles(dir: string = PUBLIC_DIR): PageFiles {
  const files = new Map<string, { body: Buffer; type: string }>();
  for (const name of readdirSync(dir)) {
    const type = CONTENT_TYPES[extname(name)];
    if (type !== undefined) files.set(`/${name}`, { body: readFileSync(join(dir, name)), type });
  }
  const index = files.get('/index.html');
  if (index !== undefined) files.set('/', index);
  return files;
}

/** Serves `path` when it is one of the page's files; `false` when it is not. */
export function serveFile(files: PageFiles, path: string, response: ServerResponse): boolean {
  const file = files.get(path);
  if (file === undefined) return false;
  response.writeHead(200, {
    ...SECURITY_HEADERS,
    'content-type': file.type,
    'content-length': file.body.length,
  });
  response.end(file.body);
  return true;
}
