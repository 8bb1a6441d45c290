import { registerGenerationTask } from '../../src/generation/register-task.js';
import { lambdaPorts } from '../lib/lambda-ports.js';
import { firstStep } from '../lib/step.js';

export const makeHandler = firstStep(registerGenerationTask);
export const handler = makeHandler({ ports: lambdaPorts });
