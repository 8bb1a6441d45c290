import { writeGenerated } from '../write-generated.js';
import { schemaFiles } from './generate.js';

/** `npm run schemas`: writes schemas/ from the zod schemas (generate.ts). Prints `{written, unchanged}` (JSON). */
process.stdout.write(`${JSON.stringify(writeGenerated(schemaFiles()))}\n`);
