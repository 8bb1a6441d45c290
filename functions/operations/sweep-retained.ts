import { sweepRetained } from '../../src/operations/retained.js';
import { lambdaPorts } from '../lib/lambda-ports.js';
import { step } from '../lib/step.js';

/** The retained-items gauge: an EventBridge schedule invokes it; the telemetry puts RetainedItems from its result. */
export const makeHandler = step(sweepRetained);
export const handler = makeHandler({ ports: lambdaPorts });
