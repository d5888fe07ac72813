// The ingest's checks in a Lambda of your own: verified, then parsed, then errors rendered as JSON.
import middy from '@middy/core';
import httpJsonBodyParser from '@middy/http-json-body-parser';
import { type ForgeWebhookEvent, forgeWebhook, webhookErrors } from '../../lib/aws/index.js';

export const handler = middy(async (event: ForgeWebhookEvent) => {
  const { id, name } = event.webhook; // verified delivery id and event name; event.body is the parsed payload
  /* your code */
  return { statusCode: 202, body: JSON.stringify({ delivery: id, event: name }) };
})
  .use(forgeWebhook({ secret: process.env.WEBHOOK_SECRET }))
  .use(httpJsonBodyParser())
  .use(webhookErrors());
