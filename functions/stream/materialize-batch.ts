import { materializeGen0Batch } from '../../src/stream/append/gen0-batch.js';
import { lambdaPorts } from '../lib/lambda-ports.js';
import { step } from '../lib/step.js';

export const makeHandler = step(materializeGen0Batch);
export const handler = makeHandler(lambdaPorts);
