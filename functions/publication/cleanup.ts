import { flowStep } from '../../src/delivery/steps/flow-stop.js';
import { cleanupPublication } from '../../src/publication/steps/cleanup.js';
import { deliveryStep, lambdaTargetDeps } from '../lib/delivery-deps.js';

export const makeHandler = deliveryStep(flowStep(cleanupPublication, { last: true }));
export const handler = makeHandler({ delivery: lambdaTargetDeps });
