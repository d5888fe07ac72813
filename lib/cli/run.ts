// The `forgebridge` process: runs the CLI on this process's arguments and exits with its code.
import { main } from './program.js';

process.exitCode = await main(process.argv);
