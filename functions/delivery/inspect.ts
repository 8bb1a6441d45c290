import { inspectFailedDelivery } from '../../src/delivery/recovery/flow-steps.js';
import { lambdaPorts } from '../lib/lambda-ports.js';
import { step } from '../lib/step.js';

/** The automatic reconcile's first step: the failed delivery's invocation and its projection (read-only). */
export const makeHandler = step(inspectFailedDelivery);
export const handler = makeHandler(lambdaPorts);
