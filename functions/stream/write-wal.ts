import { writeWal } from '../../src/stream/append/write-wal.js';
import { lambdaPorts } from '../lib/lambda-ports.js';
import { firstStep } from '../lib/step.js';

export const makeHandler = firstStep(writeWal);
export const handler = makeHandler({ ports: lambdaPorts });
