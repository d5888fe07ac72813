// The order vitest starts the files of a project in. vitest's own order (BaseSequencer) runs the files it has timed
// before longest first, and files it has not timed by size: on a fresh clone (CI) it has timed none, so a run of
// the integration group ended with its longest files last, one worker idle behind them (390 s against 341 s for the
// same tree with vitest's timings at hand, on 2 cores). The files below start first, longest first, as measured on
// 2 cores; every other file follows in vitest's own order. The list only shapes how the two workers share the time:
// a file missing from it, or a new long one, still runs, only later.
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** The longest files, longest first (seconds on 2 cores, beforeAll included, in a whole run). */
const LONGEST = [
  'test/integration/aws/ingest/faults.test.ts', // 57
  'test/integration/infra/package.test.ts', // 33 after a 60 s beforeAll
  'test/integration/infra/stage-config.test.ts', // 24
  'test/integration/local-stack/start-script.test.ts', // 23
  'test/integration/aws/reconcile/github.test.ts', // 21
  'test/integration/cli/cli-log.test.ts', // 18
  'test/integration/package/npm-package.test.ts', // 18
  'test/integration/cli/cli.test.ts', // 15
  'test/integration/aws/tokens/token-store.test.ts', // 11
  'test/integration/webhooks/middleware-early-answers.test.ts', // 10
  'test/integration/cli/connect.test.ts', // 7
  'test/integration/local-stack/watchdog.test.ts', // 6
  'test/integration/aws/reconcile/gitlab.test.ts', // 6
  'test/integration/local-stack/inspector-server.test.ts', // 6
  'test/integration/aws/ingest/durable.test.ts', // 6
];

const root = new URL('../../', import.meta.url).pathname;

function rank(spec: TestSpecification): number {
  const index = LONGEST.indexOf(spec.moduleId.replace(root, ''));
  return index === -1 ? LONGEST.length : index;
}

/** vitest's order, with the files of {@link LONGEST} first within their project, in the order listed. */
export default class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    // vitest's order keeps a project's files together (groups first, then projects): reorder within each run.
    const runs: TestSpecification[][] = [];
    for (const spec of sorted) {
      const last = runs.at(-1);
      if (last !== undefined && last[0]?.project.name === spec.project.name) last.push(spec);
      else runs.push([spec]);
    }
    // Array.prototype.sort is stable: the rest keep vitest's order.
    return runs.flatMap((run) => [...run].sort((a, b) => rank(a) - rank(b)));
  }
}
