import { trimLane } from '../../src/stream/trim.js';
import { lambdaPorts } from '../lib/lambda-ports.js';
import { step } from '../lib/step.js';

export const makeHandler = step(trimLane);
export const handler = makeHandler(lambdaPorts);
