// `npm run send -- issues.opened`: signs a sample delivery (a real payload from @octokit/webhooks-examples)
// and posts it to the local stack started by `npm start`. The subscribers whose rules match log what they
// receive in the `npm start` terminal. `--forge` sends it the way that forge does (its own event names, headers
// and signature) to the local stack's source of that forge (`/webhooks/<forge>`, or `--source`).
//   npm run send -- push
//   npm run send -- issues.opened --url http://127.0.0.1:3000/webhooks --secret s3cret
//   npm run send -- pull_request.opened --forge gitlab
//   npm run send -- push --forge gitea --source gitea
import { parseArgs } from 'node:util';
import { DEFAULT_SOURCE, isSourceName, SOURCE_NAME_RULE } from '../lib/aws/internal.js';
import { readStackState, stateFile } from '../lib/cli/state-file.js';
import { type Forge, Forges, resolvePreset } from '../lib/webhooks/index.js';
import {
  forgeSample,
  type SignedDelivery,
  sampleDelivery,
  signDelivery,
  signForgeDelivery,
} from '../local-stack/sample-deliveries.js';
import { DEVELOPMENT_WEBHOOK_SECRET, LOCAL_SOURCES, localSourceSecret } from '../local-stack/stack.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    url: { type: 'string' },
    secret: { type: 'string' },
    id: { type: 'string' },
    forge: { type: 'string' },
    source: { type: 'string' },
  },
});

function fail(message: string): never {
  console.error(message);
  process.exit(2);
}

const forge = values.forge ?? 'generic';
if (!(Forges as readonly string[]).includes(forge)) {
  fail(`"--forge" must be one of ${Forges.join(', ')}`);
}
// The local stack serves one source per forge, named after it; `default` is the generic one.
const source =
  values.source ?? LOCAL_SOURCES.find((candidate) => candidate.forge === forge)?.name ?? DEFAULT_SOURCE;
if (!isSourceName(source)) {
  fail(`"--source" must be ${SOURCE_NAME_RULE}`);
}

const state = readStackState(stateFile());
const baseUrl =
  values.url ?? process.env.FORGEBRIDGE_WEBHOOK_URL ?? state.webhookUrl ?? 'http://127.0.0.1:3000/webhooks';
const url =
  values.url !== undefined || source === DEFAULT_SOURCE
    ? baseUrl
    : `${baseUrl.replace(/\/+$/, '')}/${source}`;
const baseSecret =
  values.secret ?? process.env.FORGEBRIDGE_WEBHOOK_SECRET ?? state.secret ?? DEVELOPMENT_WEBHOOK_SECRET;
const secret = values.secret ?? localSourceSecret(baseSecret, source);
const eventName = positionals[0] ?? 'issues.opened';
const options = values.id === undefined ? {} : { id: values.id };

let delivery: SignedDelivery;
try {
  if (resolvePreset(forge as Forge).neutral) {
    const example = sampleDelivery(eventName);
    delivery = signDelivery(secret, example.name, example.payload, options);
  } else {
    const sample = forgeSample(forge as Forge, eventName);
    delivery = signForgeDelivery(secret, sample.forge, sample.nativeName, sample.payload, options);
  }
} catch (error) {
  fail(error instanceof Error ? error.message : String(error));
}
console.log(
  `POST ${url}  ${eventName} (${forge}, source ${source})  delivery ${delivery.id}  (${Buffer.byteLength(delivery.body)} bytes)`,
);
try {
  const response = await fetch(url, { method: 'POST', headers: delivery.headers, body: delivery.body });
  console.log(`${response.status} ${response.statusText}  ${await response.text()}`);
  process.exit(response.status < 300 ? 0 : 1);
} catch (error) {
  console.error(`could not reach ${url}: is \`npm start\` running? (${(error as Error).cause ?? error})`);
  process.exit(1);
}
