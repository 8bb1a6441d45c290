import { writeWal } from '../../src/stream/append/write-wal.js';
import { lambdaPorts } from '../lib/lambda-ports.js';
import { step } from '../lib/step.js';

export const makeHandler = step(writeWal);
export const handler = makeHandler(lambdaPorts);
