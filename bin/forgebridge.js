#!/usr/bin/env node
// `npx forgebridge`: registers the pinned tsx loader and runs the TypeScript CLI (lib/cli), so the command
// works in the repository without a build step.
import { register } from 'tsx/esm/api';

register();
await import('../lib/cli/run.ts');
