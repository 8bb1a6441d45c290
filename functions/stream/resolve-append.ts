import { resolveAppend } from '../../src/stream/resolve.js';
import { lambdaPorts } from '../lib/lambda-ports.js';
import { firstStep } from '../lib/step.js';

export const makeHandler = firstStep(resolveAppend);
export const handler = makeHandler(lambdaPorts);
