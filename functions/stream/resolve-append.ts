import { resolveLane } from '../../src/stream/resolve-lane.js';
import { lambdaPorts } from '../lib/lambda-ports.js';
import { step } from '../lib/step.js';

export const makeHandler = step(resolveLane);
export const handler = makeHandler(lambdaPorts);
