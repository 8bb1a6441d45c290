import { quality } from '../../src/delivery/steps/quality.js';
import { deliveryStep, lambdaTargetDeps } from '../lib/delivery-deps.js';

export const makeDeliveryHandler = deliveryStep(quality);
export const handler = makeDeliveryHandler(lambdaTargetDeps);
