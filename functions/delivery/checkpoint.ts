import { checkpoint } from '../../src/delivery/steps/checkpoint.js';
import { deliveryStep, lambdaTargetDeps } from '../lib/delivery-deps.js';

export const makeDeliveryHandler = deliveryStep(checkpoint);
export const handler = makeDeliveryHandler(lambdaTargetDeps);
