import { Readable } from 'node:stream';
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { describe, expect, it, vi } from 'vitest';
import { numberEnv, optionalEnv, requireEnv, sdkTimeouts, withoutSdkCallLog } from '../../../lib/aws/env.js';

/** An EventBridge client answering every call in process, with a logger that records what it is given. */
function recordingClient() {
  const logger = { debug: vi.fn(), info: vi.fn(), warn: vi.fn(), error: vi.fn() };
  const client = new EventBridgeClient({
    region: 'us-east-1',
    credentials: { accessKeyId: 'unit', secretAccessKey: 'unit' },
    logger,
    requestHandler: {
      handle: async () => ({
        response: {
          statusCode: 200,
          headers: { 'content-type': 'application/x-amz-json-1.1' },
          body: Readable.from([Buffer.from('{"FailedEntryCount":0,"Entries":[{"EventId":"e-1"}]}')]),
        },
      }),
    },
  });
  return { client, logger };
}
const putOne = new PutEventsCommand({
  Entries: [{ Source: 'unit', DetailType: 'push', Detail: '{"payload":{"big":"x"}}' }],
});

describe('lib/aws/env', () => {
  it('requireEnv returns the value and names a missing or empty variable', () => {
    expect(requireEnv('A', { A: 'x' })).toBe('x');
    expect(() => requireEnv('A', {})).toThrow(new TypeError('environment variable "A" is required'));
    expect(() => requireEnv('A', { A: '' })).toThrow(TypeError);
  });

  it('optionalEnv treats empty as unset', () => {
    expect(optionalEnv('A', { A: '' })).toBeUndefined();
    expect(optionalEnv('A', { A: 'y' })).toBe('y');
  });

  it('numberEnv parses positive numbers and names a bad value', () => {
    expect(numberEnv('N', { N: '262144' })).toBe(262144);
    expect(numberEnv('N', {})).toBeUndefined();
    for (const bad of ['0', '-1', 'abc', 'Infinity']) {
      expect(() => numberEnv('N', { N: bad })).toThrow(
        new TypeError('environment variable "N" must be a positive number'),
      );
    }
  });

  it('sdkTimeouts gives SDK clients a 1 s connect and a request timeout that throws, 5 s by default', () => {
    expect(sdkTimeouts()).toEqual({
      requestHandler: { connectionTimeout: 1_000, requestTimeout: 5_000, throwOnRequestTimeout: true },
    });
    expect(sdkTimeouts(2_000).requestHandler.requestTimeout).toBe(2_000);
  });

  it('withoutSdkCallLog stops the SDK building a log record of each call, and keeps the client working', async () => {
    const plain = recordingClient();
    await plain.client.send(putOne);
    // The SDK's log step hands the call's input and output to the logger.
    expect(plain.logger.info).toHaveBeenCalledWith(
      expect.objectContaining({ commandName: 'PutEventsCommand', input: expect.any(Object) }),
    );

    const quiet = recordingClient();
    expect(withoutSdkCallLog(quiet.client)).toBe(quiet.client);
    const answer = await quiet.client.send(putOne);
    expect(answer.Entries).toEqual([{ EventId: 'e-1' }]);
    expect(quiet.logger.info).not.toHaveBeenCalled();
  });
});
