import { resolveAppend } from '../../src/stream/resolve.js';
import { lambdaPorts } from '../lib/lambda-ports.js';
import { step } from '../lib/step.js';

export const makeHandler = step(resolveAppend);
export const handler = makeHandler(lambdaPorts);
