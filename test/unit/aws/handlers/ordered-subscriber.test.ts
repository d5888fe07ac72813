// createOrderedSubscriberHandler: a Kinesis batch of stream events, handled one after the other; the first record
// that fails stops the batch and is answered (ReportBatchItemFailures), so Lambda retries from it and never past it.
import { describe, expect, it } from 'vitest';
import { createOrderedSubscriberHandler } from '../../../../lib/aws/handlers/subscriber.js';
import { lambdaContext, recordingLogger } from '../ingest/events.js';

const record = (sequenceNumber: string, delivery: string, data?: string) => ({
  kinesis: {
    sequenceNumber,
    partitionKey: 'github|octo/hello#pr:1',
    data:
      data ??
      Buffer.from(
        JSON.stringify({
          version: '0',
          id: delivery,
          'detail-type': 'pull_request.opened',
          source: 'forge.webhooks',
          time: '2026-12-01T00:00:00.000Z',
          detail: {
            delivery,
            event: 'pull_request',
            action: 'opened',
            payload: { action: 'opened', n: delivery },
          },
        }),
      ).toString('base64'),
  },
});

function subscriber(fail: (id: string) => boolean) {
  const seen: string[] = [];
  const reports: string[] = [];
  const logger = recordingLogger();
  const handler = createOrderedSubscriberHandler({
    name: 'ordered',
    env: {},
    logger,
    register: (events) =>
      events.on('pull_request', ({ id }) => {
        seen.push(id);
        if (fail(id)) throw new Error(`refused ${id}`);
      }),
    deliveryLog: { recordSubscriber: async (id, report) => void reports.push(`${id}:${report.outcome}`) },
  });
  return { handler, seen, reports, logger };
}

describe('createOrderedSubscriberHandler()', () => {
  it('handles every record of the batch in order and answers no failure', async () => {
    const { handler, seen, reports } = subscriber(() => false);
    const answer = await handler(
      { Records: [record('1', 'a'), record('2', 'b'), record('3', 'c')] },
      lambdaContext(),
    );
    expect(answer).toEqual({ batchItemFailures: [] });
    expect(seen).toEqual(['a', 'b', 'c']);
    expect(reports).toEqual(['a:ok', 'b:ok', 'c:ok']);
  });

  it('stops at the first failing record and answers its sequence number; nothing after it runs', async () => {
    const { handler, seen, reports, logger } = subscriber((id) => id === 'b');
    const answer = await handler(
      { Records: [record('1', 'a'), record('2', 'b'), record('3', 'c')] },
      lambdaContext(),
    );
    expect(answer).toEqual({ batchItemFailures: [{ itemIdentifier: '2' }] });
    expect(seen).toEqual(['a', 'b']);
    expect(reports).toEqual(['a:ok', 'b:error']);
    const line = logger.lines.find((entry) => entry.message === 'ordered delivery failed, batch stopped');
    expect(line?.fields[0]).toMatchObject({
      sequenceNumber: '2',
      partitionKey: 'github|octo/hello#pr:1',
      left: 2,
    });
    // Its code only: the message ("refused b") may quote the payload.
    expect(JSON.stringify(line)).not.toContain('refused');
  });

  it('fails a record that holds no delivery event, before any handler ran', async () => {
    const { handler, seen } = subscriber(() => false);
    const bad = record('9', 'x', Buffer.from('not json').toString('base64'));
    expect(await handler({ Records: [bad, record('10', 'y')] }, lambdaContext())).toEqual({
      batchItemFailures: [{ itemIdentifier: '9' }],
    });
    expect(seen).toEqual([]);
  });

  it('answers no failure for an empty batch, and throws for a failing record without a sequence number', async () => {
    const { handler } = subscriber(() => true);
    expect(await handler({ Records: [] }, lambdaContext())).toEqual({ batchItemFailures: [] });
    const broken = { kinesis: { ...record('1', 'a').kinesis, sequenceNumber: undefined } };
    await expect(handler({ Records: [broken as never] }, lambdaContext())).rejects.toThrow(
      'stream record has no sequence number',
    );
  });
});
