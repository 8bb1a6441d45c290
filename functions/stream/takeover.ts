import { takeoverLane } from '../../src/stream/takeover.js';
import { lambdaPorts } from '../lib/lambda-ports.js';
import { step } from '../lib/step.js';

export const makeHandler = step(takeoverLane);
export const handler = makeHandler(lambdaPorts);
