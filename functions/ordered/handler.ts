/**
 * The example ordered subscriber (docs/ordering.md): every `pull_request` delivery from the ordered stream, one pull
 * request's at a time, in the order the ingest accepted them, each logged `ordered delivery handled` (./work.ts).
 */
import { createOrderedSubscriberHandler } from '../../lib/aws/index.js';
import { pullRequestWork } from './work.js';

/** The Lambda entry point: a Kinesis event-source mapping's batches. */
export const handler = createOrderedSubscriberHandler({
  register: pullRequestWork('ordered delivery handled'),
});
