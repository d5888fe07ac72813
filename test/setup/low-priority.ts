// Runs before each file of the `static` project (vitest.config.ts): the file's worker, and every process it starts
// (tsc, npm, osls, cfn-lint), runs at the lowest CPU priority. These files run beside the end-to-end stack, whose
// Lambdas, timers and settling windows must keep the cores they need; the checks take what the stack leaves idle.
import { getPriority, setPriority } from 'node:os';

/** The lowest priority there is (nice 19). */
const LOWEST = 19;

if (getPriority() < LOWEST) setPriority(LOWEST);
