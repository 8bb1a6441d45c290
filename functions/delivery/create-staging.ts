import { createStaging } from '../../src/delivery/steps/create-staging.js';
import { deliveryStep, lambdaTargetDeps } from '../lib/delivery-deps.js';

export const makeDeliveryHandler = deliveryStep(createStaging);
export const handler = makeDeliveryHandler(lambdaTargetDeps);
