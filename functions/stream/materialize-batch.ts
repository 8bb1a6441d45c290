import { materializeGen0Batch } from '../../src/stream/append/gen0-batch.js';
import { lambdaPorts } from '../lib/lambda-ports.js';
import { firstStep } from '../lib/step.js';

export const makeHandler = firstStep(materializeGen0Batch);
export const handler = makeHandler({ ports: lambdaPorts });
