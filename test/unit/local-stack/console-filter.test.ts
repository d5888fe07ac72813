// `npm start`'s console filter over lines as `osls offline` writes them: serverless-offline's run line of the
// retrier, the metric lines ForgebridgeMetrics prints (captured from stdout), and function log lines.
import { describe, expect, it } from 'vitest';
import { ForgebridgeMetrics } from '../../../lib/aws/metrics.js';
import { createConsoleFilter, parseStartArgs } from '../../../local-stack/console-filter.js';

/** The lines `run` writes to stdout (not passed on: they are this test's input). */
function printed(run: () => void): string[] {
  const lines: string[] = [];
  const write = process.stdout.write;
  process.stdout.write = ((chunk: unknown) => {
    lines.push(String(chunk));
    return true;
  }) as typeof process.stdout.write;
  try {
    run();
  } finally {
    process.stdout.write = write;
  }
  return lines.join('').split('\n').filter(Boolean);
}

const metrics = new ForgebridgeMetrics({
  namespace: 'forgebridge/local',
  service: 'forgebridge',
  sources: ['default'],
  env: {},
});
const delivery = printed(() =>
  metrics.delivery({
    source: 'default',
    verdict: 'verified',
    outcome: 'published',
    bodyBytes: 812,
    durationMs: 12.5,
  }),
);
const idle = printed(() => metrics.queue({ depth: 0, oldestAgeSeconds: 0, published: 0 }));
const busy = printed(() => metrics.queue({ depth: 2, oldestAgeSeconds: 40, published: 1 }));
const subscriber = printed(() =>
  metrics.subscriber({ function: 'forgebridge-local-onIssuesOpened', outcome: 'ok', durationMs: 3 }),
);
const redriveRun =
  '(λ: redrive) RequestId: 0b6c1a52-8f1e-4c55-9a53-2f0b1c1e7d11  Duration: 41.27 ms  Billed Duration: 42 ms';
const ingestRun =
  '(λ: ingest) RequestId: 5f0c9d0e-3a0b-4a7e-8d8e-0c9f6e1d2b3a  Duration: 88.02 ms  Billed Duration: 89 ms';
const logLine = JSON.stringify({
  level: 'INFO',
  message: 'delivery published',
  function_name: 'forgebridge-local-ingest',
  delivery: 'd-1',
});
const deadLetter = JSON.stringify({
  level: 'ERROR',
  message: 'queued delivery dead-lettered',
  delivery: 'd-2',
  _aws: {
    Timestamp: 1,
    CloudWatchMetrics: [
      {
        Namespace: 'forgebridge',
        Dimensions: [[]],
        Metrics: [{ Name: 'DeadLetteredDeliveries', Unit: 'Count' }],
      },
    ],
  },
  DeadLetteredDeliveries: 1,
});

describe('npm start without --metrics', () => {
  it("drops the retrier's run lines and every metric line, and keeps everything else as it came", () => {
    const filter = createConsoleFilter();
    expect(delivery).toHaveLength(2);
    const input = [redriveRun, `\u001b[90m${redriveRun}\u001b[39m`, ...delivery, ...idle, ...subscriber];
    expect(input.map(filter)).toEqual(input.map(() => undefined));
    for (const line of [ingestRun, logLine, deadLetter, 'Server ready: http://127.0.0.1:3000 🚀', ''])
      expect(filter(line)).toBe(line);
  });
});

describe('npm start -- --metrics', () => {
  it('prints each metric line readable: values with units, dimensions but service', () => {
    const filter = createConsoleFilter({ metrics: true });
    expect([...delivery, ...subscriber].map(filter)).toEqual([
      'metrics  Deliveries=1  Source=default Verdict=verified Outcome=published',
      'metrics  IngestDuration=12.5 ms  BodyBytes=812 B',
      'metrics  SubscriberOutcome=1  SubscriberDuration=3 ms  Function=forgebridge-local-onIssuesOpened Outcome=ok',
    ]);
    expect(filter(redriveRun)).toBeUndefined();
    expect(filter(deadLetter)).toBe(deadLetter);
  });

  it("prints the retrier's queue line only when it changed since the last one printed", () => {
    const filter = createConsoleFilter({ metrics: true });
    const idleLine = 'metrics  QueueDepth=0  QueueOldestAgeSeconds=0 s  RedrivePublished=0';
    expect([...idle, ...idle, ...busy, ...busy, ...idle].map(filter)).toEqual([
      idleLine,
      undefined,
      'metrics  QueueDepth=2  QueueOldestAgeSeconds=40 s  RedrivePublished=1',
      undefined,
      idleLine,
    ]);
  });
});

describe('parseStartArgs()', () => {
  it('takes --metrics and refuses anything else, naming it', () => {
    expect(parseStartArgs([])).toEqual({ metrics: false });
    expect(parseStartArgs(['--metrics'])).toEqual({ metrics: true });
    expect(() => parseStartArgs(['--metric'])).toThrow(
      'unknown option "--metric" (npm start takes --metrics only)',
    );
  });
});
