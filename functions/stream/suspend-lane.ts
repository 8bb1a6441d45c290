import { suspendLane } from '../../src/stream/append/suspend-lane.js';
import { lambdaPorts } from '../lib/lambda-ports.js';
import { step } from '../lib/step.js';

export const makeHandler = step(suspendLane);
export const handler = makeHandler({ ports: lambdaPorts });
