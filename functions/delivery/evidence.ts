import { persistEvidence } from '../../src/delivery/steps/evidence.js';
import { deliveryStep, lambdaDeliveryDeps } from '../lib/delivery-deps.js';

export const makeDeliveryHandler = deliveryStep(persistEvidence);
export const handler = makeDeliveryHandler(lambdaDeliveryDeps);
