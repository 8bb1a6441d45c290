import { recordPreparedGeneration } from '../../src/generation/record-prepared.js';
import { lambdaPorts } from '../lib/lambda-ports.js';
import { step } from '../lib/step.js';

export const makeHandler = step(recordPreparedGeneration);
export const handler = makeHandler({ ports: lambdaPorts });
