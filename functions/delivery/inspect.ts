import { inspectFailedDelivery } from '../../src/delivery/recovery/flow-steps.js';
import { lambdaPorts } from '../lib/lambda-ports.js';
import { firstStep } from '../lib/step.js';

/** The automatic reconcile's first step: the failed delivery's invocation and its projection (read-only). */
export const makeHandler = firstStep(inspectFailedDelivery);
export const handler = makeHandler({ ports: lambdaPorts });
