import { probeGeneration } from '../../src/generation/probe.js';
import { lambdaPorts } from '../lib/lambda-ports.js';
import { step } from '../lib/step.js';

export const makeHandler = step(probeGeneration);
export const handler = makeHandler({ ports: lambdaPorts });
