import { recordIntent } from '../../src/stream/append/record-intent.js';
import { lambdaPorts } from '../lib/lambda-ports.js';
import { step } from '../lib/step.js';

export const makeHandler = step(recordIntent);
export const handler = makeHandler(lambdaPorts);
