#!/usr/bin/env node
// `npx forgebridge`. In the repository (the TypeScript sources are beside this file) it registers the pinned tsx
// loader and runs lib/cli, so the command works without a build step; in the installed package (no sources,
// only the compiled dist/) it runs dist/cli, and tsx (a dev dependency) is never loaded.
import { existsSync } from 'node:fs';

const source = new URL('../lib/cli/run.ts', import.meta.url);
if (existsSync(source)) {
  const { register } = await import('tsx/esm/api');
  register();
  await import(source.href);
} else {
  await import('../dist/cli/run.js');
}
