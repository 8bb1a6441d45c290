import { cleanup } from '../../src/delivery/steps/cleanup.js';
import { deliveryStep, lambdaTargetDeps } from '../lib/delivery-deps.js';

export const makeDeliveryHandler = deliveryStep(cleanup);
export const handler = makeDeliveryHandler(lambdaTargetDeps);
