import { materializeGen0 } from '../../src/stream/append/materialize-gen0.js';
import { lambdaPorts } from '../lib/lambda-ports.js';
import { step } from '../lib/step.js';

export const makeHandler = step(materializeGen0);
export const handler = makeHandler({ ports: lambdaPorts });
