import { writeGenerated } from '../write-generated.js';
import { CLI_REFERENCE, cliReference } from './generate.js';

/** `npm run docs:cli`: writes docs/cli.md from the commands' help texts. Prints `{written, unchanged}` (JSON). */
process.stdout.write(`${JSON.stringify(writeGenerated(new Map([[CLI_REFERENCE, await cliReference()]])))}\n`);
