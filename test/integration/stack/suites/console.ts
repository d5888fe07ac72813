// `npm start`'s console filter over what the real local stack writes: osls offline's log file, with the
// retrier invoked every 2 s, the functions' log lines and their metric lines (embedded metric format). Quiet by
// default; with `--metrics`, the metrics readable.
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { createConsoleFilter } from '../../../../local-stack/console-filter.js';
import { sampleDelivery, signDelivery } from '../../../../local-stack/sample-deliveries.js';
import type { TestStack } from '../../../helpers/stack.js';

/** Runs in the shared local stack (../local-stack.test.ts). */
export function consoleSuite(stack: () => TestStack): void {
  describe('console: the console filter', () => {
    let t: TestStack;

    beforeAll(() => {
      t = stack();
    });

    const REDRIVE_RUN = /\(λ: redrive\) RequestId: /;

    describe('the local stack through the console filter', () => {
      it('drops the retrier runs and the metric lines by default, and shows the metrics readable with --metrics', async () => {
        const file = t.stack.logFile;
        if (file === undefined) throw new Error('the test stack writes no log file');
        const lines = () => readFileSync(file, 'utf8').split('\n');
        const { name, payload } = sampleDelivery('issues.opened');
        const posted = await t.send(signDelivery(t.stack.secret, name, payload));
        expect(posted.status).toBe(202);
        // The ingest's metric line, a reporting subscriber's, and two runs of the retrier after them.
        await t.waitFor(
          () => {
            const all = lines();
            const at = all.findIndex((line) => line.includes('"SubscriberOutcome"'));
            return (
              all.some((line) => line.includes('"Deliveries":1')) &&
              at !== -1 &&
              all.slice(at).filter((line) => REDRIVE_RUN.test(line)).length >= 2 &&
              all.slice(at).filter((line) => line.includes('"QueueDepth"')).length >= 2
            );
          },
          { timeoutMs: 60_000 },
        );
        const raw = lines();

        const quiet = raw.map(createConsoleFilter()).filter((line) => line !== undefined);
        expect(quiet.filter((line) => REDRIVE_RUN.test(line))).toEqual([]);
        expect(quiet.filter((line) => line.includes('CloudWatchMetrics'))).toEqual([]);
        expect(quiet.some((line) => line.includes('"message":"delivery published"'))).toBe(true);
        expect(quiet.some((line) => line.includes('(λ: ingest) RequestId: '))).toBe(true);

        const loud = raw.map(createConsoleFilter({ metrics: true })).filter((line) => line !== undefined);
        expect(loud).toContain('metrics  Deliveries=1  Source=default Verdict=verified Outcome=published');
        expect(
          loud.some((line) => /^metrics {2}IngestDuration=[\d.]+ ms {2}BodyBytes=\d+ B$/.test(line)),
        ).toBe(true);
        expect(
          loud.some((line) =>
            /^metrics {2}SubscriberOutcome=1 {2}SubscriberDuration=[\d.]+ ms {2}Function=forgebridge-\w+-\w+ Outcome=ok$/.test(
              line,
            ),
          ),
        ).toBe(true);
        // Every run printed its queue line; shown only when it changed, so an idle queue shows once.
        const idle = 'metrics  QueueDepth=0  QueueOldestAgeSeconds=0 s  RedrivePublished=0';
        const runs = raw.filter((line) => line.includes('"QueueDepth"')).length;
        const shown = loud.filter((line) => line.startsWith('metrics  QueueDepth='));
        expect(shown).toContain(idle);
        expect(shown.length).toBeLessThan(runs);
        shown.forEach((line, index) => {
          if (index > 0) expect(line).not.toBe(shown[index - 1]);
        });
        expect(loud.filter((line) => REDRIVE_RUN.test(line))).toEqual([]);
      });
    });
  });
}
