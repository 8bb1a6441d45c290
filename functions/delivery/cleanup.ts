import { cleanup } from '../../src/delivery/steps/cleanup.js';
import { flowStep } from '../../src/delivery/steps/flow-stop.js';
import { deliveryStep, lambdaTargetDeps } from '../lib/delivery-deps.js';

export const makeHandler = deliveryStep(flowStep(cleanup, { last: true }));
export const handler = makeHandler({ delivery: lambdaTargetDeps });
