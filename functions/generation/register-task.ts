import { registerGenerationTask } from '../../src/generation/register-task.js';
import { lambdaPorts } from '../lib/lambda-ports.js';
import { step } from '../lib/step.js';

export const makeHandler = step(registerGenerationTask);
export const handler = makeHandler(lambdaPorts);
