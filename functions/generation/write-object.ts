import { writeGenerationObject } from '../../src/generation/write-object.js';
import { lambdaPorts } from '../lib/lambda-ports.js';
import { step } from '../lib/step.js';

export const makeHandler = step(writeGenerationObject);
export const handler = makeHandler({ ports: lambdaPorts });
