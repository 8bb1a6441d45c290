import { trimLane } from '../../src/stream/trim.js';
import { lambdaPorts } from '../lib/lambda-ports.js';
import { firstStep } from '../lib/step.js';

export const makeHandler = firstStep(trimLane);
export const handler = makeHandler({ ports: lambdaPorts });
