// Preloaded into the `osls offline` child (node --import, local-stack/offline.ts): at most so many instances of
// each function run at once, as a concurrency limit does on Lambda; an invocation beyond it waits for a free
// instance, first come first served.
//
// serverless-offline starts a worker thread (the function's whole bundle loaded anew) for every invocation that
// finds no idle instance. Lambda gives each of those a microVM of its own; here they share two cores. 50 deliveries
// at once, each fanned out to every rule's target, started some 200 threads that starved the ingest past its
// timeout. With a limit, the ingest keeps its share and the rules' targets catch up behind it, as they would
// behind Lambda's event queue.
//
// The limits come from FORGEBRIDGE_OFFLINE_CONCURRENCY, a JSON object: a function key (`ingest`) and `*` (every
// other function), each a positive integer. Without the variable nothing changes.
import Lambda from 'serverless-offline/lambda';
import { limitConcurrency, parseConcurrency } from './offline-concurrency-limit.mjs';

const text = process.env.FORGEBRIDGE_OFFLINE_CONCURRENCY;
if (text !== undefined && text !== '') limitConcurrency(Lambda, parseConcurrency(text));
