// End to end through ONE real local stack (local-stack/stack.ts: serverless-offline running every function,
// DynamoDB Local, s3rver, oidc-provider, the forge API stand-in, GitHub's and GitLab's delivery-log stand-ins, the
// inspector), started once for all the suites under ./suites: a stack takes seconds to start, and each suite proves
// its point on deliveries of its own (its own ids, its own sources), so they need no stack of their own. The stack
// has the bus proxy, which the routing suite stops to make PutEvents fail and starts again. The suites run in the
// order listed, one at a time.
import { afterAll, beforeAll } from 'vitest';
import { startTestStack, type TestStack } from '../../helpers/stack.js';
import { cliSuite } from './suites/cli.js';
import { cliForgesSuite } from './suites/cli-forges.js';
import { connectSuite } from './suites/connect.js';
import { consoleSuite } from './suites/console.js';
import { deliveryLogSuite } from './suites/delivery-log.js';
import { examplesSuite } from './suites/examples.js';
import { forgesSuite } from './suites/forges.js';
import { inspectorSuite } from './suites/inspector.js';
import { reconcileSuite } from './suites/reconcile.js';
import { routingSuite } from './suites/routing.js';
import { standardSuite } from './suites/standard.js';

let shared: TestStack | undefined;

beforeAll(async () => {
  shared = await startTestStack({ busProxy: true, forgeStandIns: true });
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
