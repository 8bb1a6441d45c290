import { cleanup } from '../../src/delivery/steps/cleanup.js';
import { flowStep } from '../../src/delivery/steps/flow-stop.js';
import { deliveryStep, lambdaTargetDeps } from '../lib/delivery-deps.js';

export const makeDeliveryHandler = deliveryStep(flowStep(cleanup, { last: true }));
export const handler = makeDeliveryHandler(lambdaTargetDeps);
