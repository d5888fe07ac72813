// Sends one signed delivery, the way a forge does: the exact JSON body, signed with the shared secret.
//
//   npx tsx examples/webhooks/send-delivery.ts http://127.0.0.1:3000/webhooks <secret> [event]
import { randomUUID } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { sign } from '../../lib/webhooks/index.js';

export async function sendDelivery(
  url: string,
  secret: string,
  name: string,
  payload: object,
): Promise<{ status: number; body: string }> {
  const body = JSON.stringify(payload); // the exact bytes that are signed and sent
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-forge-event': name,
      'x-forge-delivery': randomUUID(),
      'x-hub-signature-256': sign(secret, body),
    },
    body,
  });
  return { status: response.status, body: await response.text() };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [url, secret, name = 'issues'] = process.argv.slice(2);
  if (!url || !secret) {
    console.error('usage: send-delivery.ts <url> <secret> [event]');
    process.exit(2);
  }
  const result = await sendDelivery(url, secret, name, {
    action: 'opened',
    issue: { number: 1, title: 'Hello' },
  });
  console.log(result.status, result.body);
}
