import { writeIndex } from '../../src/stream/append/write-index.js';
import { lambdaPorts } from '../lib/lambda-ports.js';
import { step } from '../lib/step.js';

export const makeHandler = step(writeIndex);
export const handler = makeHandler({ ports: lambdaPorts });
