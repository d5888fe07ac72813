// Signing and verifying without a server: the published vectors, a secret rotation, and why the raw body
// matters.
import { sign, verify } from '../../lib/webhooks/index.js';

export function main() {
  // The forge's published vector.
  const signature = sign("It's a Secret to Everybody", 'Hello, World!');
  // -> 'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17'

  // Verify the exact raw body (a string or a Buffer) against the X-Hub-Signature-256 header.
  const rawBody = Buffer.from('{"foo":"bar"}');
  const header = 'sha256=4864d2759938a15468b5df9ade20bf161da9b4f737ea61794142f3484236bda3';
  const valid = verify('mysecret', rawBody, header); // true
  const forged = verify('mysecret', Buffer.from('{"foo":"baz"}'), header); // false
  const garbage = verify('mysecret', rawBody, 'not-a-signature'); // false, never a throw

  // Legacy sha1 (X-Hub-Signature) on request.
  const sha1 = sign('mysecret', rawBody, { algorithm: 'sha1' });
  // -> 'sha1=d03207e4b030cf234e3447bac4d93add4c6643d8'

  // Rotation: sign with the first secret, accept either while the forge switches over.
  const rotated = verify(['new-secret', 'old-secret'], rawBody, sign('old-secret', rawBody)); // true

  // A parsed object is re-serialized the way the forge serializes; keep the raw body when you can.
  const fromObject = verify('mysecret', { foo: 'bar' }, header); // true

  return { signature, valid, forged, garbage, sha1, rotated, fromObject };
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(main());
