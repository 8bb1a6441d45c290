import { markCandidates } from '../../src/stream/gc/mark.js';
import { lambdaPorts } from '../lib/lambda-ports.js';
import { step } from '../lib/step.js';

export const makeHandler = step(markCandidates);
export const handler = makeHandler({ ports: lambdaPorts });
