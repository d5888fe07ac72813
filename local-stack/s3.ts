/**
 * s3rver (a local S3 API server, on npm) for the claim check in tests and the local stack: 127.0.0.1, a free
 * port, a fresh temp directory, buckets created up front.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { S3ClientConfig } from '@aws-sdk/client-s3';

/** The part of s3rver's API used here (the package ships no types). */
interface S3rverInstance {
  run(): Promise<{ address: string; port: number }>;
  close(): Promise<void>;
  httpServer?: Server;
}
type S3rverConstructor = new (options: {
  address: string;
  port: number;
  silent: boolean;
  directory: string;
  configureBuckets: { name: string; configs: string[] }[];
  allowMismatchedSignatures?: boolean;
}) => S3rverInstance;

/**
 * A running s3rver.
 *
 * @example
 * ```ts
 * const local: LocalS3 = await startS3({ buckets: ['claims'] }); await local.stop();
 * ```
 * @see https://github.com/jamhall/s3rver#readme
 */
export interface LocalS3 {
  /** `http://127.0.0.1:<port>`. */
  endpoint: string;
  port: number;
  /** Where objects are stored; removed by `stop()`. */
  directory: string;
  /** Client settings that reach it (endpoint, path-style, region, dummy credentials). */
  clientConfig: S3ClientConfig;
  /** Closes the server and removes its directory. Safe to call twice. */
  stop(): Promise<void>;
}

/**
 * Options of {@link startS3}.
 *
 * @example
 * ```ts
 * await startS3({ buckets: ['forgebridge-claims'] });
 * ```
 * @see https://github.com/jamhall/s3rver#readme
 */
export interface StartS3Options {
  /** Buckets to create. Default none. */
  buckets?: readonly string[];
  /** Port. Default: a free one. */
  port?: number;
  /** Log every request. Default `false`. */
  verbose?: boolean;
}

/**
 * Client settings for an s3rver endpoint: path-style addressing, a fixed region, s3rver's accepted credentials.
 *
 * @example
 * ```ts
 * const s3 = new S3Client(localS3ClientConfig(local.endpoint));
 * ```
 * @see https://github.com/jamhall/s3rver#readme
 */
export function localS3ClientConfig(endpoint: string): S3ClientConfig {
  return {
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    maxAttempts: 1,
  };
}

/**
 * Starts s3rver on 127.0.0.1 and a free port, storing objects in a new temp directory.
 *
 * @example
 * ```ts
 * const local = await startS3({ buckets: ['claims'] });
 * const s3 = new S3Client(local.clientConfig);
 * await local.stop();
 * ```
 * @see https://docs.aws.amazon.com/AmazonS3/latest/API/API_PutObject.html
 */
export async function startS3(options: StartS3Options = {}): Promise<LocalS3> {
  const require = createRequire(import.meta.url);
  const S3rver = require('s3rver') as S3rverConstructor;
  const directory = await mkdtemp(join(tmpdir(), 'forgebridge-s3-'));
  const server = new S3rver({
    address: '127.0.0.1',
    port: options.port ?? 0,
    silent: options.verbose !== true,
    directory,
    configureBuckets: (options.buckets ?? []).map((name) => ({ name, configs: [] })),
  });
  let address: { port: number };
  try {
    address = await server.run();
  } catch (error) {
    await rm(directory, { recursive: true, force: true });
    throw error;
  }
  const endpoint = `http://127.0.0.1:${address.port}`;
  let stopped = false;
  return {
    endpoint,
    port: address.port,
    directory,
    clientConfig: localS3ClientConfig(endpoint),
    async stop() {
      if (stopped) return;
      stopped = true;
      server.httpServer?.closeAllConnections();
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
