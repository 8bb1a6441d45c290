import { cleanupCommittedTask } from '../../src/generation/cleanup-task.js';
import { lambdaPorts } from '../lib/lambda-ports.js';
import { step } from '../lib/step.js';

export const makeHandler = step(cleanupCommittedTask);
export const handler = makeHandler({ ports: lambdaPorts });
