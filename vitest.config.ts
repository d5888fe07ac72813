import { configDefaults, defineConfig } from 'vitest/config';
import { cliBuildEntry } from './test/setup/cli-build.js';
import LongestFirstSequencer from './test/setup/sequencer.js';
import { testRunDir } from './test/setup/test-run.js';

const setupFiles = ['test/setup/log-guard.ts'];
// The run's shared folder (test/setup/test-run.ts): the e2e project records the functions' AWS calls there, the
// iam project evaluates them, and the packaged template is kept there for the run.
// The CLI the tests run as a process, built once per run (test/setup/cli-build.ts).
const runEnv = {
  FORGEBRIDGE_TEST_RUN_DIR: testRunDir().dir,
  FORGEBRIDGE_TEST_CLI: cliBuildEntry(testRunDir().dir),
};

export default defineConfig({
  // vitest keeps its cache under node_modules/.vite; nothing is written to $HOME.
  test: {
    // Makes the run's folder new when the run starts and removes it when it ends.
    // Builds the CLI that the tests run as a process (test/setup/cli-build.ts) and removes it after the run.
    globalSetup: ['test/setup/test-run.ts', 'test/setup/cli-build.ts'],
    // The longest files start first, also on a fresh clone where vitest has no timings (test/setup/sequencer.ts).
    sequence: { sequencer: LongestFirstSequencer },
    // `npm test` (scripts/test.mjs) turns coverage on for the whole suite; a run of a few files leaves it off,
    // since their coverage says nothing about the thresholds.
    coverage: {
      provider: 'v8',
      include: ['lib/**', 'functions/**'],
      // Generated tables, and the inspector page's script, which runs in the browser (Chromium tests drive it).
      exclude: ['lib/webhooks/generated/**', 'lib/inspector/public/**'],
      reporter: ['text-summary', 'json-summary'],
      reportsDirectory: '.tmp/coverage',
      // The three libraries at 90% lines and branches each; the whole at 90% lines and 88% branches, since parts of
      // lib/cli are proven as a process (exit codes, signals, a terminal), which v8 coverage cannot see.
      thresholds: {
        lines: 90,
        branches: 88,
        'lib/webhooks/**': { lines: 90, branches: 90 },
        'lib/oauth2/**': { lines: 90, branches: 90 },
        'lib/aws/**': { lines: 90, branches: 90 },
      },
      // Print the numbers also when a test failed (vitest's default is to skip the report then).
      reportOnFailure: true,
    },
    // Four groups, one after the other, each with its own worker count.
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          // `*.test-d.ts` files are type tests: tsc checks them (and what they import) and a type error fails its
          // test. Only they are in tsconfig.typecheck.json; `npm test` type-checks everything else with tsc.
          typecheck: {
            enabled: true,
            include: ['test/unit/**/*.test-d.ts'],
            tsconfig: 'tsconfig.typecheck.json',
          },
          // One module context for all unit files (vitest's `isolate: false`): each file no longer imports the
          // AWS SDK and Powertools anew, which took most of this project's time. A file's SDK stubs are undone
          // after it (test/setup/sdk-mocks.ts); the log guard captures per file.
          isolate: false,
          // Two module contexts, one per core (vitest's default is one worker on 2 cores): about 5 s less.
          maxWorkers: 2,
          setupFiles: [...setupFiles, 'test/setup/sdk-mocks.ts'],
          environment: 'node',
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          exclude: [...configDefaults.exclude, 'test/integration/stack/**'],
          setupFiles,
          // One DynamoDB Local for every file of this project (each file makes tables of its own).
          globalSetup: ['test/setup/dynamodb-local.ts'],
          // The files of a worker share one module context, as the unit project's do: each file no longer starts
          // a process and imports the AWS SDK, Powertools and the servers anew (about 40 s less of the project's
          // 260 on 2 cores). A file undoes what it changed: its servers, its stubbed variables
          // (`vi.unstubAllEnvs`), its signal listeners, its module state (scenarios.ts' `sampleScenarios`).
          isolate: false,
          environment: 'node',
          env: runEnv,
          // Integration files start real servers (DynamoDB Local, oidc-provider, s3rver): give them room and
          // keep at most two running at once on a 2-core machine.
          testTimeout: 60_000,
          hookTimeout: 120_000,
          maxWorkers: 2,
          sequence: { groupOrder: 1 },
        },
      },
      {
        test: {
          name: 'e2e',
          // The whole local stack (serverless-offline running every function in worker threads, DynamoDB
          // Local, s3rver, oidc-provider) per file: one file at a time, after the integration files, so that no
          // other suite competes with the Lambdas for the two cores. Beside them (one group, two workers) the run
          // was about 30 s shorter, but two of three fresh-clone runs then failed an e2e test on timing: a
          // connection reset mid-post, and a reconcile run that listed the forge's deliveries before they settled.
          include: ['test/integration/stack/**/*.test.ts'],
          setupFiles,
          environment: 'node',
          env: runEnv,
          testTimeout: 120_000,
          hookTimeout: 180_000,
          maxWorkers: 1,
          sequence: { groupOrder: 2 },
        },
      },
      {
        test: {
          name: 'iam',
          // Last: every AWS call the functions made in the e2e project, evaluated against each function's role in
          // the packaged template (test/iam/recorded-calls.test.ts).
          include: ['test/iam/**/*.test.ts'],
          setupFiles,
          environment: 'node',
          env: runEnv,
          testTimeout: 60_000,
          hookTimeout: 180_000,
          sequence: { groupOrder: 3 },
        },
      },
    ],
  },
});
