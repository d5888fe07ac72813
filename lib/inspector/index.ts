/**
 * The delivery inspector's server: the page, the JSON API over a delivery log, live updates; the local stack
 * serves it with replays to its own ingest and signed samples, `forgebridge inspect --stage` with replays
 * on the stage's bus.
 */

export type { BulkReplayAction, BulkRunView } from './bulk-replay.js';
export { HttpError } from './http.js';
export { type InspectorRule, loadRules, matchedRules, matchesPattern } from './rules.js';
export {
  type ActionAnswer,
  type Inspector,
  type InspectorActions,
  type ServeInspectorOptions,
  serveInspector,
} from './server.js';
