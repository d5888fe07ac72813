// End to end through ONE real local stack (local-stack/stack.ts: serverless-offline running every function,
// DynamoDB Local, s3rver, oidc-provider, the forge API stand-in, GitHub's and GitLab's delivery-log stand-ins, the
// inspector), started once for all the suites under ./suites: a stack takes seconds to start, and each suite proves
// its point on deliveries of its own (its own ids, its own sources), so they need no stack of their own. The stack
// has the bus proxy, which the routing suite stops to make PutEvents fail and starts again. The suites run in the
// order listed, one at a time. A suite checks its counts the moment the deliveries it waits for arrived, and keeps
// them (`t.holds`); the last test checks every kept count again once the stack has had time to deliver late copies:
// one wait for the whole file instead of one after each delivery.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../../helpers/stack.js';
import { cliSuite } from './suites/cli.js';
import { cliForgesSuite } from './suites/cli-forges.js';
import { connectSuite } from './suites/connect.js';
import { consoleSuite } from './suites/console.js';
import { deliveryLogSuite } from './suites/delivery-log.js';
import { dlqSuite } from './suites/dlq.js';
import { examplesSuite } from './suites/examples.js';
import { forgesSuite } from './suites/forges.js';
import { governorSuite } from './suites/governor.js';
import { inspectorSuite } from './suites/inspector.js';
import { inspectorReplaySuite } from './suites/inspector-replay.js';
import { orderedSuite } from './suites/ordered.js';
import { reconcileSuite } from './suites/reconcile.js';
import { replaySuite } from './suites/replay.js';
import { routingSuite } from './suites/routing.js';
import { standardSuite } from './suites/standard.js';

let shared: TestStack | undefined;

beforeAll(async () => {
  // The routing suite's bus failure waits out the publish budget of each post while the bus refuses: 3 s (lib/aws's
  // default) instead of the local stage's 12. An attempt under way is never cut off by the budget, so a slow bus
  // still gets its answer in.
  shared = await startTestStack({
    busProxy: true,
    forgeStandIns: true,
    publishBudgetMs: 3_000,
    // The ordered subscriber's twin on the bus as a rule target is on Lambda: an instance for every event at once
    // (the stack's own limit, 2 per core, would hand it the bus's events one after the other, in the order they
    // came), so that the ordered suite sees what the bus does to order.
    concurrency: { onPullRequestOnBus: 100 },
  });
}, 180_000);

afterAll(async () => {
  await shared?.stop();
});

/** The started stack; a suite reads it in its own `beforeAll`, after the one above. */
function stack(): TestStack {
  if (shared === undefined) throw new Error('the local stack did not start');
  return shared;
}

// First, on the empty stack a new user meets: its listings hold exactly what it sent.
cliSuite(stack);
consoleSuite(stack);
deliveryLogSuite(stack);
inspectorSuite(stack);
cliForgesSuite(stack);
forgesSuite(stack);
standardSuite(stack);
routingSuite(stack);
examplesSuite(stack);
reconcileSuite(stack);
connectSuite(stack);
replaySuite(stack);
inspectorReplaySuite(stack);
dlqSuite(stack);
governorSuite(stack);
// Last before the late check: its load (50 senders at once) would slow the suites above.
orderedSuite(stack);

// Last: nothing arrived late. A copy published twice, a rule that matched what it should not, a refused delivery
// published after all: each would change a count some suite kept.
describe('late deliveries', () => {
  it('every count a suite kept still holds once the stack has had 3 s more to deliver', async () => {
    const checked = await stack().assertSettled(3_000);
    expect(checked).toBeGreaterThanOrEqual(20);
  });
});
