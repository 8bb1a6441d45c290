import { abortGeneration } from '../../src/generation/abort.js';
import { lambdaPorts } from '../lib/lambda-ports.js';
import { step } from '../lib/step.js';

export const makeHandler = step(abortGeneration);
export const handler = makeHandler({ ports: lambdaPorts });
