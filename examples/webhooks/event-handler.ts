// The event handler on its own: no secret, no HTTP. Handlers for `event.action`, `event` and `*` run
// together; failures are collected and reported once.
import { createEventHandler, WebhookReceiveError } from '../../lib/webhooks/index.js';

export async function main(log: (line: string) => void = console.log) {
  const { on, receive } = createEventHandler();

  on('issues.opened', ({ payload }) => {
    // Common fields (action, sender, repository, ...) are typed; the rest of a payload is left open.
    const issue = payload.issue as { number: number; title: string };
    log(`opened #${issue.number}: ${issue.title}`);
  });
  on('issues', ({ id, payload }) => log(`issues.${payload.action} in delivery ${id}`));
  on('*', ({ name }) => log(`saw ${name}`));
  on('push', () => {
    throw new Error('deploy failed');
  });
  on('error', (error) =>
    log(`error event: ${error.errors?.length} failed handler(s) for ${error.event?.name}`),
  );

  const payload = { action: 'opened', issue: { number: 42, title: 'Add dark mode' } };
  await receive({ id: 'delivery-1', name: 'issues', payload });

  try {
    await receive({ id: 'delivery-2', name: 'push', payload: { ref: 'refs/heads/main' } });
  } catch (error) {
    if (error instanceof WebhookReceiveError) log(`receive rejected: ${error.errors.length} error(s)`);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
