// readProxyMessage: the pure reading of one proxy channel message (no server needed, but it lives with the
// proxy channel's tests).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ProxyChannelError } from '../../../lib/webhooks/errors.js';
import { readProxyMessage } from '../../../lib/webhooks/proxy-message.js';

const signature = `sha256=${'a'.repeat(64)}`;
const smeeMessage = {
  host: 'smee.io',
  'content-type': 'application/json',
  'x-forge-event': 'issues',
  'x-forge-delivery': 'd-1',
  'x-hub-signature': `sha1=${'b'.repeat(40)}`,
  'x-hub-signature-256': signature,
  body: { action: 'opened' },
  query: {},
  timestamp: 1_700_000_000_000,
};

describe('readProxyMessage()', () => {
  it('maps the service’s message to id, name, payload and the sha256 signature', () => {
    expect(readProxyMessage(JSON.stringify(smeeMessage))).toEqual({
      ok: true,
      bodyForm: 'object',
      event: { id: 'd-1', name: 'issues', payload: { action: 'opened' }, signature },
    });
  });

  it('keeps a string body as the exact text', () => {
    const body = '{ "action" : "opened" }';
    const result = readProxyMessage(JSON.stringify({ ...smeeMessage, body, 'x-request-id': 'r-1' }));
    expect(result).toEqual({
      ok: true,
      bodyForm: 'text',
      event: { id: 'r-1', name: 'issues', payload: body, signature },
    });
  });

  it('reads keys in any case', () => {
    const result = readProxyMessage(
      JSON.stringify({
        'X-Forge-Event': 'ping',
        'X-Request-Id': 'r-2',
        'X-Hub-Signature-256': signature,
        body: '{}',
      }),
    );
    expect(result.ok && result.event).toEqual({ id: 'r-2', name: 'ping', payload: '{}', signature });
  });

  it('takes the first value of a repeated header', () => {
    const result = readProxyMessage(JSON.stringify({ ...smeeMessage, 'x-forge-event': ['push', 'ping'] }));
    expect(result.ok && result.event.name).toBe('push');
  });

  it('reads no fallback id when a custom id key is configured', () => {
    const result = readProxyMessage(JSON.stringify(smeeMessage), { keys: { id: 'x-github-delivery' } });
    expect(result.ok).toBe(false);
    expect(!result.ok && [result.error.code, result.error.message]).toEqual([
      'missing_field',
      'message has no "x-github-delivery" key',
    ]);
  });

  it('lets a message without an id through when requireDeliveryId is false', () => {
    const { 'x-forge-delivery': _, ...withoutId } = smeeMessage;
    const result = readProxyMessage(JSON.stringify(withoutId), { requireDeliveryId: false });
    expect(result.ok && result.event.id).toBe('');
  });

  it('never throws, whatever the data', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.json(), fc.anything()), (data) => {
        const result = readProxyMessage(data);
        if (!result.ok) expect(result.error).toBeInstanceOf(ProxyChannelError);
      }),
      { numRuns: 2000 },
    );
  });

  it('never accepts a message without a signature', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (fields) => {
        const message = { ...fields };
        delete message['x-hub-signature-256'];
        delete message['x-hub-signature'];
        for (const key of Object.keys(message)) {
          if (key.toLowerCase().startsWith('x-hub-signature')) delete message[key];
        }
        expect(readProxyMessage(JSON.stringify(message)).ok).toBe(false);
      }),
    );
  });
});
