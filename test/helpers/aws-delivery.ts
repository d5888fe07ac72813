/**
 * Signed webhook deliveries for the lib/aws tests, as the forge would post them.
 */
import { sign } from '../../lib/webhooks/index.js';

/** The development secret of the aws tests. */
export const TEST_SECRET = 'aws-test-secret';

/**
 * Headers and raw body of a delivery signed with `secret` (sha256).
 *
 * @example
 * ```ts
 * const { headers, body } = signedDelivery({ action: 'opened' }, { event: 'issues', id: 'd-1' });
 * ```
 */
export function signedDelivery(
  payload: unknown,
  options: { event?: string; id?: string; secret?: string; body?: string } = {},
): { headers: Record<string, string>; body: string } {
  const body = options.body ?? JSON.stringify(payload);
  return {
    headers: {
      'content-type': 'application/json',
      'x-forge-event': options.event ?? 'issues',
      'x-forge-delivery': options.id ?? 'd-1',
      'x-hub-signature-256': sign(options.secret ?? TEST_SECRET, body),
    },
    body,
  };
}
