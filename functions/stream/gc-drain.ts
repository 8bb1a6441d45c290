import { drainPage } from '../../src/stream/gc/drain.js';
import { lambdaPorts } from '../lib/lambda-ports.js';
import { step } from '../lib/step.js';

export const makeHandler = step(drainPage);
export const handler = makeHandler({ ports: lambdaPorts });
