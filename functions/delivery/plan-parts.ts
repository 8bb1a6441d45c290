import { planParts } from '../../src/delivery/steps/plan-parts.js';
import { deliveryStep, lambdaSourceDeps } from '../lib/delivery-deps.js';

export const makeDeliveryHandler = deliveryStep(planParts);
export const handler = makeDeliveryHandler(lambdaSourceDeps);
