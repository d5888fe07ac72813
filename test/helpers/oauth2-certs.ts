// Certificates for the tls_client_auth (RFC 8705) tests, generated at test time: a CA, a server certificate
// for 127.0.0.1 and a client certificate, both signed by the CA. Written to a fresh temp dir as well, for
// tools that want paths.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generate } from 'selfsigned';

export interface TestCertificates {
  ca: { key: string; cert: string };
  server: { key: string; cert: string };
  client: { key: string; cert: string };
  /** The client certificate's subject in RFC 4514 form, for `tls_client_auth_subject_dn`. */
  clientSubjectDn: string;
  /** The client certificate's DNS subject alternative name, for `tls_client_auth_san_dns`. */
  clientSanDns: string;
  /** Directory holding ca.pem, server.pem, server-key.pem, client.pem, client-key.pem. */
  dir: string;
  remove(): Promise<void>;
}

const CLIENT_CN = 'forgebridge-mtls-client';
const CLIENT_DNS = 'mtls-client.forge.test';

/**
 * Generates the CA, server and client certificates (EC P-256, SHA-256, valid one day).
 *
 * @example
 * const certs = await createTestCertificates();
 * await startAuthorizationServer({ tls: { key: certs.server.key, cert: certs.server.cert, ca: certs.ca.cert } });
 */
export async function createTestCertificates(): Promise<TestCertificates> {
  const notAfterDate = new Date(Date.now() + 24 * 3600 * 1000);
  const common = { keyType: 'ec', curve: 'P-256', algorithm: 'sha256', notAfterDate } as const;
  const ca = await generate([{ name: 'commonName', value: 'forgebridge test CA' }], {
    ...common,
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    ],
  });
  const signer = { key: ca.private, cert: ca.cert };
  const server = await generate([{ name: 'commonName', value: '127.0.0.1' }], {
    ...common,
    ca: signer,
    extensions: [
      { name: 'basicConstraints', cA: false, critical: true },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 7, ip: '127.0.0.1' },
          { type: 2, value: 'localhost' },
        ],
      },
    ],
  });
  const client = await generate([{ name: 'commonName', value: CLIENT_CN }], {
    ...common,
    ca: signer,
    extensions: [
      { name: 'basicConstraints', cA: false, critical: true },
      { name: 'keyUsage', digitalSignature: true, critical: true },
      { name: 'extKeyUsage', clientAuth: true },
      { name: 'subjectAltName', altNames: [{ type: 2, value: CLIENT_DNS }] },
    ],
  });

  const dir = await mkdtemp(join(tmpdir(), 'forgebridge-certs-'));
  await Promise.all([
    writeFile(join(dir, 'ca.pem'), ca.cert),
    writeFile(join(dir, 'server.pem'), server.cert),
    writeFile(join(dir, 'server-key.pem'), server.private, { mode: 0o600 }),
    writeFile(join(dir, 'client.pem'), client.cert),
    writeFile(join(dir, 'client-key.pem'), client.private, { mode: 0o600 }),
  ]);

  return {
    ca: signer,
    server: { key: server.private, cert: server.cert },
    client: { key: client.private, cert: client.cert },
    clientSubjectDn: `CN=${CLIENT_CN}`,
    clientSanDns: CLIENT_DNS,
    dir,
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}
