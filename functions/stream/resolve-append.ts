import { resolveLane } from '../../src/stream/resolve-lane.js';
import { lambdaPorts } from '../lib/lambda-ports.js';
import { firstStep } from '../lib/step.js';

export const makeHandler = firstStep(resolveLane);
export const handler = makeHandler({ ports: lambdaPorts });
