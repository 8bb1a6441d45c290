import { scanPage } from '../../src/stream/gc/scan.js';
import { lambdaPorts } from '../lib/lambda-ports.js';
import { firstStep } from '../lib/step.js';

export const makeHandler = firstStep(scanPage);
export const handler = makeHandler({ ports: lambdaPorts });
