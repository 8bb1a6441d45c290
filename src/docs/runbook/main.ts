import { writeGenerated } from '../write-generated.js';
import { RUNBOOK_DIR, runbookFiles } from './generate.js';

/**
 * `npm run docs:runbook`: writes docs/runbook/ from the code's state-to-action tables and
 * removes pages no state generates any more. Prints `{written, unchanged, removed}` (JSON)
 * on stdout.
 */
process.stdout.write(`${JSON.stringify(writeGenerated(runbookFiles(), { dir: RUNBOOK_DIR, suffix: '.md' }))}\n`);
