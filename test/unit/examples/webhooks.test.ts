// Runs the webhook examples that the README shows.
import { describe, expect, it } from 'vitest';
import { main as eventHandlerMain } from '../../../examples/webhooks/event-handler.js';
import { start } from '../../../examples/webhooks/receiver.js';
import { sendDelivery } from '../../../examples/webhooks/send-delivery.js';
import { main as signAndVerifyMain } from '../../../examples/webhooks/sign-and-verify.js';

describe('examples/webhooks', () => {
  it('sign-and-verify.ts gives the published vectors and the documented results', () => {
    expect(signAndVerifyMain()).toEqual({
      signature: 'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17',
      valid: true,
      forged: false,
      garbage: false,
      sha1: 'sha1=d03207e4b030cf234e3447bac4d93add4c6643d8',
      rotated: true,
      fromObject: true,
    });
  });

  it('event-handler.ts runs action, event and * handlers and reports the failing one', async () => {
    const lines: string[] = [];
    await eventHandlerMain((line) => lines.push(line));
    expect(lines).toEqual([
      'opened #42: Add dark mode',
      'issues.opened in delivery delivery-1',
      'saw issues',
      'saw push',
      'error event: 1 failed handler(s) for push',
      'receive rejected: 1 error(s)',
    ]);
  });

  it('receiver.ts logs verified deliveries from send-delivery.ts and refuses forged ones', async () => {
    const lines: string[] = [];
    const receiver = await start({ port: 0, log: (line) => lines.push(line) });
    try {
      expect(receiver.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/webhooks$/);
      expect(receiver.secret).toMatch(/^dev-[0-9a-f]{32}$/);
      const accepted = await sendDelivery(receiver.url, receiver.secret, 'issues', { action: 'opened' });
      expect(accepted).toEqual({ status: 200, body: '{"ok":true}' });
      const forged = await sendDelivery(receiver.url, 'guessed-secret', 'issues', { action: 'closed' });
      expect(forged.status).toBe(401);
      expect(lines).toHaveLength(2);
      expect(lines[0]).toMatch(/^verified issues\.opened \(delivery [0-9a-f-]{36}\)$/);
      expect(lines[1]).toBe('refused: invalid_signature for issues');
    } finally {
      await receiver.close();
    }
  });

  it('receiver.ts uses a given secret', async () => {
    const receiver = await start({ port: 0, secret: 'given', log: () => {} });
    try {
      expect(receiver.secret).toBe('given');
      expect((await sendDelivery(receiver.url, 'given', 'push', { ref: 'refs/heads/main' })).status).toBe(
        200,
      );
    } finally {
      await receiver.close();
    }
  });
});
