import { cleanup } from '../../src/delivery/steps/cleanup.js';
import { deliveryStep, lambdaDeliveryDeps } from '../lib/delivery-deps.js';

export const makeDeliveryHandler = deliveryStep(cleanup);
export const handler = makeDeliveryHandler(lambdaDeliveryDeps);
