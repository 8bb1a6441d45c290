import { writeGenerated } from '../write-generated.js';
import { PICTURES_DIR, pictureFiles } from './generate.js';

/**
 * `npm run docs:pictures`: writes docs/pictures/ (one SVG per flow and their index) and
 * removes the pictures of flows that are gone. Prints `{written, unchanged, removed}` (JSON).
 */
process.stdout.write(
  `${JSON.stringify(writeGenerated(await pictureFiles(), { dir: PICTURES_DIR, suffix: '.svg' }))}\n`,
);
