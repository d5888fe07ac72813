// Standard Webhooks verify of a 25 KB delivery, ours side by side with the `standardwebhooks` package (and
// `svix`'s verifier), measured in one run. Fairness: every task gets the same body string and the same three
// headers (signed once, at the start: the run takes well under the 5-minute tolerance), parses the JSON body
// (readDelivery always does; `standardwebhooks` does by default; svix's verifier does not), and checks its
// result so nothing is optimized away. Rounds, rotation and the median are those of webhooks.bench.ts.
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { readDelivery, standardSecret } from '../lib/webhooks/index.js';
import { measure, payloadOf25KB, printTable, target } from './webhooks.bench.js';

const OURS = 'forgebridge readDelivery (standard)';
const STANDARD = 'standardwebhooks Webhook.verify';
const SVIX = 'svix Webhook.verify';

export default async function standardWebhooksBench(): Promise<void> {
  const secret = standardSecret('bench');
  // A 25 KB payload with its Standard Webhooks type.
  const base = JSON.parse(payloadOf25KB()) as Record<string, unknown>;
  const empty = JSON.stringify({ type: 'pull_request.opened', ...base, padding: '' });
  const padding = 'x'.repeat(25 * 1024 - Buffer.byteLength(empty));
  const body = JSON.stringify({ type: 'pull_request.opened', ...base, padding });
  if (Buffer.byteLength(body) !== 25 * 1024) throw new Error(`body is ${Buffer.byteLength(body)} bytes`);
  const id = 'msg_2KWPBgLlAfxdpx2AI54pPJ85f4W';
  const now = new Date();
  const headers = {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
    'webhook-signature': new StandardWebhook(secret).sign(id, now, body),
  };
  const options = { secret, forge: 'standard' } as const;
  const standard = new StandardWebhook(secret);
  const svix = new SvixWebhook(secret);
  const measured = await measure({
    [OURS]: async () => {
      const result = readDelivery({ headers, body }, options);
      if (!result.ok) throw new Error(`not verified: ${result.code}`);
    },
    [STANDARD]: async () => {
      const payload = standard.verify(body, headers) as { type?: unknown };
      if (payload.type !== 'pull_request.opened') throw new Error('not verified');
    },
    [SVIX]: async () => {
      svix.verify(body, headers);
    },
  });
  printTable('verify of a 25 KB Standard Webhooks delivery, median of 9 rounds', measured.rows);
  console.log('Ratios: median of the per-round ratios (both tasks measured in the same round).');
  // "Within 1.1x of standardwebhooks' verify": at least 1/1.1 of its throughput.
  target('standard verify vs standardwebhooks', measured, OURS, STANDARD, 1 / 1.1);
  target('standard verify vs svix', measured, OURS, SVIX, 1 / 1.1);
}
