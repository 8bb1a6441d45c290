import { finalizeDeleted } from '../../src/stream/gc/delete.js';
import { lambdaPorts } from '../lib/lambda-ports.js';
import { step } from '../lib/step.js';

export const makeHandler = step(finalizeDeleted);
export const handler = makeHandler({ ports: lambdaPorts });
