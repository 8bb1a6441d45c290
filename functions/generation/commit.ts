import { commitGeneration } from '../../src/generation/commit.js';
import { lambdaPorts } from '../lib/lambda-ports.js';
import { step } from '../lib/step.js';

export const makeHandler = step(commitGeneration);
export const handler = makeHandler({ ports: lambdaPorts });
