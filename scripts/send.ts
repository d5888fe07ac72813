// `npm run send -- issues.opened`: signs a sample delivery (a real payload from @octokit/webhooks-examples)
// and posts it to the local stack started by `npm start`. The subscribers whose rules match log what they
// receive in the `npm start` terminal.
//   npm run send -- push
//   npm run send -- issues.opened --url http://127.0.0.1:3000/webhooks --secret s3cret
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { sampleDelivery, signDelivery } from '../local-stack/sample-deliveries.js';
import { DEVELOPMENT_WEBHOOK_SECRET } from '../local-stack/stack.js';

const root = new URL('..', import.meta.url).pathname;
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    url: { type: 'string' },
    secret: { type: 'string' },
    id: { type: 'string' },
  },
});

const stateFile = join(root, '.tmp/local-stack.json');
const state = existsSync(stateFile)
  ? (JSON.parse(readFileSync(stateFile, 'utf8')) as { webhookUrl?: string; secret?: string })
  : {};
const url =
  values.url ?? process.env.FORGEBRIDGE_WEBHOOK_URL ?? state.webhookUrl ?? 'http://127.0.0.1:3000/webhooks';
const secret =
  values.secret ?? process.env.FORGEBRIDGE_WEBHOOK_SECRET ?? state.secret ?? DEVELOPMENT_WEBHOOK_SECRET;
const eventName = positionals[0] ?? 'issues.opened';

let example: ReturnType<typeof sampleDelivery>;
try {
  example = sampleDelivery(eventName);
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  process.exit(2);
}
const delivery = signDelivery(
  secret,
  example.name,
  example.payload,
  values.id === undefined ? {} : { id: values.id },
);
console.log(
  `POST ${url}  ${eventName}  delivery ${delivery.id}  (${Buffer.byteLength(delivery.body)} bytes)`,
);
try {
  const response = await fetch(url, { method: 'POST', headers: delivery.headers, body: delivery.body });
  console.log(`${response.status} ${response.statusText}  ${await response.text()}`);
  process.exit(response.status < 300 ? 0 : 1);
} catch (error) {
  console.error(`could not reach ${url}: is \`npm start\` running? (${(error as Error).cause ?? error})`);
  process.exit(1);
}
