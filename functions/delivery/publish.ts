import { publish } from '../../src/delivery/steps/publish.js';
import { deliveryStep, lambdaTargetDeps } from '../lib/delivery-deps.js';

export const makeDeliveryHandler = deliveryStep(publish);
export const handler = makeDeliveryHandler(lambdaTargetDeps);
