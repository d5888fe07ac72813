// `npm run bench`: runs every bench/*.bench.ts in turn. Each module exports `default async () => void` and
// prints its own table, with our figures side by side with the peer's from the same run.
import { readdirSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

const dir = fileURLToPath(new URL('.', import.meta.url));
const only = process.argv.slice(2);
const files = readdirSync(dir)
  .filter((file) => file.endsWith('.bench.ts'))
  .filter((file) => only.length === 0 || only.some((name) => file.startsWith(name)))
  .sort();

if (files.length === 0) {
  console.error(`no benchmark matches ${only.join(', ') || 'bench/*.bench.ts'}`);
  process.exit(1);
}

for (const file of files) {
  console.log(`\n## ${file.replace('.bench.ts', '')}  (node ${process.version})\n`);
  const module = (await import(pathToFileURL(`${dir}${file}`).href)) as { default: () => Promise<void> };
  await module.default();
}
