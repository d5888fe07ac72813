// Webhook toolset throughput, ours side by side with the peers, measured in one run:
// - verify() of a 25 KB payload: ours, @octokit/webhooks-methods' verify, bare node:crypto HMAC.
// - receive() of one event with three handlers: ours vs @octokit/webhooks.
// Fairness: every verify task gets the same payload string and signature header value (decoded per call);
// every receive task the same payload object and the same three trivial handlers. Every task is an async
// function that awaits its call (octokit's verify is async; ours is sync and awaited the same way), and each
// checks its result so nothing is optimized away. Tasks run interleaved in several rounds, in a rotating
// order, with tinybench warm-up in each; the median round is reported, so a noisy neighbour on a shared
// machine hits every task alike.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { Webhooks as OctokitWebhooks } from '@octokit/webhooks';
import { verify as octokitVerify } from '@octokit/webhooks-methods';
import { Bench } from 'tinybench';
import { verify, Webhooks } from '../lib/webhooks/index.js';
import { examplePayload } from './fixtures/webhook-payload.js';

const ROUNDS = 9;
const TIME_MS = 300;
const WARMUP_MS = 100;
const PAYLOAD_BYTES = 25 * 1024;
const OURS_VERIFY = 'forgebridge verify';
const OCTOKIT_VERIFY = '@octokit/webhooks-methods verify';
const BARE_VERIFY = 'node:crypto createHmac + timingSafeEqual';
const OURS_RECEIVE = 'forgebridge receive';
const OCTOKIT_RECEIVE = '@octokit/webhooks receive';
const SECRET = 'bench-secret-of-a-usual-length-0123456789';

interface Row {
  name: string;
  opsPerSecond: number;
  rme: number;
}

/** A real payload padded to exactly 25 KB of compact JSON. */
export function payloadOf25KB(): string {
  const base = examplePayload('pull_request');
  const empty = JSON.stringify({ ...base, padding: '' });
  const json = JSON.stringify({ ...base, padding: 'x'.repeat(Math.max(0, PAYLOAD_BYTES - empty.length)) });
  if (Buffer.byteLength(json) !== PAYLOAD_BYTES)
    throw new Error(`payload is ${Buffer.byteLength(json)} bytes`);
  return json;
}

interface Measured {
  rows: Row[];
  /** Throughput of each task in each round, for paired (same-round) ratios. */
  rounds: Map<string, number[]>;
}

/** Runs the tasks interleaved for ROUNDS rounds; returns each task's median round and every round. */
export async function measure(tasks: Record<string, () => Promise<void>>): Promise<Measured> {
  const rounds = new Map<string, { opsPerSecond: number; rme: number }[]>();
  for (let round = 0; round < ROUNDS; round++) {
    const bench = new Bench({ time: TIME_MS, warmupTime: WARMUP_MS });
    // Rotate the order every round, so no task always runs first (or last) in a round.
    const entries = Object.entries(tasks);
    for (let i = 0; i < entries.length; i++) {
      const [name, fn] = entries[(i + round) % entries.length]!;
      bench.add(name, fn);
    }
    await bench.run();
    for (const task of bench.tasks) {
      const result = task.result;
      if (result.state !== 'completed') {
        throw new Error(
          `task '${task.name}' ${result.state}${'error' in result ? `: ${result.error.message}` : ''}`,
        );
      }
      const list = rounds.get(task.name!) ?? [];
      list.push({ opsPerSecond: result.throughput.mean, rme: result.throughput.rme });
      rounds.set(task.name!, list);
    }
  }
  const rows = Object.keys(tasks).map((name) => {
    const list = [...rounds.get(name)!].sort((a, b) => a.opsPerSecond - b.opsPerSecond);
    return { name, ...list[Math.floor(list.length / 2)]! };
  });
  const perRound = new Map(
    [...rounds].map(([name, list]) => [name, list.map((entry) => entry.opsPerSecond)]),
  );
  return { rows, rounds: perRound };
}

export function printTable(title: string, rows: Row[]): void {
  console.log(`${title}`);
  console.table(
    rows.map((row) => ({
      task: row.name,
      'ops/s': Math.round(row.opsPerSecond).toLocaleString('en-US'),
      'µs/op': (1e6 / row.opsPerSecond).toFixed(2),
      '± %': row.rme.toFixed(2),
    })),
  );
}

/** Median of the same-round ratios ours/peer, with their range, against the target. */
export function target(label: string, measured: Measured, ours: string, peer: string, minimum: number): void {
  const a = measured.rounds.get(ours)!;
  const b = measured.rounds.get(peer)!;
  const ratios = a.map((value, round) => value / b[round]!).sort((x, y) => x - y);
  const ratio = ratios[Math.floor(ratios.length / 2)]!;
  const range = `rounds ${ratios[0]!.toFixed(2)}-${ratios.at(-1)!.toFixed(2)}`;
  const verdict = ratio >= minimum ? 'PASS' : 'MISS';
  console.log(`${verdict}  ${label}: ${ratio.toFixed(3)}x (${range}; target >= ${minimum.toFixed(2)}x)`);
}

export default async function webhooksBench(): Promise<void> {
  // verify(): one 25 KB string for everyone, one valid sha256 signature.
  const payload = payloadOf25KB();
  const signature = `sha256=${createHmac('sha256', SECRET).update(payload).digest('hex')}`;
  const ok = (valid: boolean) => {
    if (!valid) throw new Error('signature did not verify');
  };
  const verifyMeasured = await measure({
    [OURS_VERIFY]: async () => ok(await verify(SECRET, payload, signature)),
    [OCTOKIT_VERIFY]: async () => ok(await octokitVerify(SECRET, payload, signature)),
    [BARE_VERIFY]: async () =>
      ok(
        timingSafeEqual(
          createHmac('sha256', SECRET).update(payload).digest(),
          Buffer.from(signature.slice('sha256='.length), 'hex'),
        ),
      ),
  });

  // receive(): the same `issues.opened` event, the same three handlers on both.
  const event = {
    id: 'bench-delivery',
    name: 'issues',
    payload: examplePayload('issues', 'opened'),
  } as const;
  let calls = 0;
  const handler = () => {
    calls++;
  };
  const ours = new Webhooks({ secret: SECRET });
  const octokit = new OctokitWebhooks({ secret: SECRET });
  ours.on('issues.opened', handler);
  ours.on('issues', handler);
  ours.on('*', handler);
  octokit.on('issues.opened', handler);
  octokit.on('issues', handler);
  octokit.onAny(handler); // octokit v14's name for a '*' handler
  const checkCalls = async (receive: () => Promise<void>) => {
    const before = calls;
    await receive();
    if (calls - before !== 3) throw new Error(`expected 3 handler calls, got ${calls - before}`);
  };
  const receiveMeasured = await measure({
    [OURS_RECEIVE]: () => checkCalls(() => ours.receive(event)),
    [OCTOKIT_RECEIVE]: () =>
      checkCalls(() => octokit.receive(event as Parameters<typeof octokit.receive>[0])),
  });

  printTable(
    `verify() of a ${PAYLOAD_BYTES / 1024} KB payload (sha256), median of ${ROUNDS} rounds`,
    verifyMeasured.rows,
  );
  printTable(`receive() of one event with three handlers, median of ${ROUNDS} rounds`, receiveMeasured.rows);
  console.log('Ratios: median of the per-round ratios (both tasks measured in the same round).');
  target('verify vs @octokit/webhooks-methods', verifyMeasured, OURS_VERIFY, OCTOKIT_VERIFY, 1.0);
  target('verify vs bare node:crypto HMAC', verifyMeasured, OURS_VERIFY, BARE_VERIFY, 0.95);
  target('receive vs @octokit/webhooks', receiveMeasured, OURS_RECEIVE, OCTOKIT_RECEIVE, 1.0);
}
