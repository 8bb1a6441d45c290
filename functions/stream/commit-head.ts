import { commitHead } from '../../src/stream/append/commit-head.js';
import { lambdaPorts } from '../lib/lambda-ports.js';
import { step } from '../lib/step.js';

export const makeHandler = step(commitHead);
export const handler = makeHandler({ ports: lambdaPorts });
