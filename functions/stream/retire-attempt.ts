import { retireAttempt } from '../../src/stream/append/retire-attempt.js';
import { lambdaPorts } from '../lib/lambda-ports.js';
import { step } from '../lib/step.js';

export const makeHandler = step(retireAttempt);
export const handler = makeHandler({ ports: lambdaPorts });
