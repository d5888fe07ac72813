// The whole test suite: lint + format check, type check, generated-file check, then every vitest project
// (the unit project also type-checks the `*.test-d.ts` type tests) with coverage and its thresholds
// (vitest.config.ts). Prints coverage per area and a plain closing line `Tests: N passed, N failed` that CI reads.
// `npm test -- <vitest args>` skips the static checks and coverage and passes the arguments to vitest.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';

const args = process.argv.slice(2);
const root = new URL('..', import.meta.url).pathname;

// No state in $HOME: osls, vitest and friends get a throw-away home for this run.
const home = mkdtempSync(join(tmpdir(), 'forgebridge-home-'));
const env = {
  ...process.env,
  // As `npm test` does: the pinned Node 22 (the `node` dev dependency) and the local tools come first, also when
  // this script itself was started with another `node`.
  PATH: `${join(root, 'node_modules/.bin')}${delimiter}${process.env.PATH ?? ''}`,
  HOME: home,
  XDG_CONFIG_HOME: join(home, '.config'),
  XDG_DATA_HOME: join(home, '.local/share'),
  XDG_CACHE_HOME: join(home, '.cache'),
  // Node's code cache for every Node process of the run (osls, the CLI, the vitest workers, tsc), in the run's home:
  // each process after the first that loads a module reuses its compiled code. About a sixth less CPU for the
  // suites that start many processes (the CLI's and osls's), measured on a 2-core machine.
  NODE_COMPILE_CACHE: join(home, 'node-compile-cache'),
  SLS_TELEMETRY_DISABLED: '1',
  SLS_NOTIFICATIONS_MODE: 'off',
  // The run's shared folder (test/setup/test-run.ts): the end-to-end suites record the functions' AWS calls there and
  // the iam project evaluates them. Only a run of the whole suite requires a call of every function and judges the
  // grants no call used (test/iam/recorded-calls.test.ts).
  FORGEBRIDGE_TEST_RUN_DIR: join(home, 'test-run'),
  FORGEBRIDGE_TEST_SCOPE: args.length === 0 ? 'full' : 'partial',
};

function run(label, command, commandArgs) {
  process.stdout.write(`\n> ${label}\n`);
  const result = spawnSync(command, commandArgs, { cwd: root, env, stdio: 'inherit' });
  return result.status ?? 1;
}

const bin = (name) => join(root, 'node_modules/.bin', name);
let failed = false;

/**
 * Runs a static check beside the tests, at a lower CPU priority (nice 10): it takes the cores the test servers leave
 * idle (the end-to-end suites mostly wait on the Lambdas' timers). Its output is kept and printed, under its label,
 * after the tests.
 */
function background(label, command, commandArgs) {
  return new Promise((resolve) => {
    const child = spawn('nice', ['-n', '10', command, ...commandArgs], { cwd: root, env });
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr.on('data', (chunk) => {
      output += chunk;
    });
    child.on('error', (error) => resolve({ label, status: 1, output: `${output}${error.message}\n` }));
    child.on('close', (code) => resolve({ label, status: code ?? 1, output }));
  });
}

let checks = Promise.resolve([]);
if (args.length === 0) {
  // Lint and format first and on their own: a second or two, and the clearest failure to see first.
  if (run('lint and format (biome)', bin('biome'), ['ci', '.']) !== 0) {
    failed = true;
    process.stdout.write('lint and format (biome): FAILED\n');
  }
  const slow = [['type check (tsc)', bin('tsc'), ['-p', 'tsconfig.json', '--noEmit']]];
  if (existsSync(join(root, 'scripts/generate-webhook-catalogue.ts'))) {
    slow.push([
      'generated files are up to date',
      process.execPath,
      ['--import', 'tsx', 'scripts/generate-webhook-catalogue.ts', '--check'],
    ]);
  }
  process.stdout.write(
    `\n> ${slow.map(([label]) => label).join(', ')}: beside the tests, reported after them\n`,
  );
  checks = Promise.all(slow.map(([label, command, commandArgs]) => background(label, command, commandArgs)));
}

mkdirSync(join(root, '.tmp'), { recursive: true });
const report = join(root, '.tmp/vitest-report.json');
rmSync(report, { force: true });
// This run's own coverage folder (in the throw-away home), so that another vitest run with coverage in the same
// tree cannot clean it away half-way.
const coverageDir = join(home, 'coverage');
const coverageSummary = join(coverageDir, 'coverage-summary.json');
const vitestStatus = run('tests (vitest)', bin('vitest'), [
  'run',
  '--reporter=default',
  '--reporter=json',
  `--outputFile.json=${report}`,
  // A partial run's coverage says nothing about the thresholds: coverage is on for the whole suite only.
  ...(args.length === 0 ? ['--coverage', `--coverage.reportsDirectory=${coverageDir}`] : []),
  ...args,
]);

for (const { label, status, output } of await checks) {
  process.stdout.write(`\n> ${label}\n${output}`);
  if (status !== 0) {
    failed = true;
    process.stdout.write(`${label}: FAILED\n`);
  }
}

if (existsSync(coverageSummary)) {
  const files = Object.entries(JSON.parse(readFileSync(coverageSummary, 'utf8'))).filter(
    ([f]) => f !== 'total',
  );
  process.stdout.write('\nCoverage per area (lines, branches):\n');
  for (const area of [
    'lib/webhooks/',
    'lib/oauth2/',
    'lib/aws/',
    'lib/cli/',
    'lib/inspector/',
    'functions/',
  ]) {
    const sum = { lines: [0, 0], branches: [0, 0] };
    for (const [file, metrics] of files) {
      if (!file.startsWith(join(root, area))) continue;
      for (const key of ['lines', 'branches']) {
        sum[key][0] += metrics[key].covered;
        sum[key][1] += metrics[key].total;
      }
    }
    const pct = ([covered, total]) => (total === 0 ? '-' : `${((100 * covered) / total).toFixed(1)}%`);
    process.stdout.write(`  ${area.padEnd(14)} ${pct(sum.lines)}, ${pct(sum.branches)}\n`);
  }
}

let passed = 0;
let failedTests = 0;
let skipped = 0;
if (existsSync(report)) {
  const summary = JSON.parse(readFileSync(report, 'utf8'));
  passed = summary.numPassedTests ?? 0;
  failedTests = summary.numFailedTests ?? 0;
  skipped = (summary.numPendingTests ?? 0) + (summary.numTodoTests ?? 0);
}
rmSync(home, { recursive: true, force: true });

if (vitestStatus !== 0 || failedTests > 0) failed = true;
if (passed === 0) {
  process.stdout.write('no test was executed\n');
  failed = true;
}
process.stdout.write(
  `\nTests: ${passed} passed, ${failedTests} failed${skipped ? `, ${skipped} skipped` : ''}\n`,
);
process.exit(failed ? 1 : 0);
