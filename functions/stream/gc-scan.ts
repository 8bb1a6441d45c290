import { scanPage } from '../../src/stream/gc/scan.js';
import { lambdaPorts } from '../lib/lambda-ports.js';
import { step } from '../lib/step.js';

export const makeHandler = step(scanPage);
export const handler = makeHandler(lambdaPorts);
