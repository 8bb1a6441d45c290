import { takeoverLane } from '../../src/stream/takeover.js';
import { lambdaPorts } from '../lib/lambda-ports.js';
import { firstStep } from '../lib/step.js';

export const makeHandler = firstStep(takeoverLane);
export const handler = makeHandler({ ports: lambdaPorts });
