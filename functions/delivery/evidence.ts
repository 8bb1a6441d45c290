import { persistEvidence } from '../../src/delivery/steps/evidence.js';
import { deliveryStep, lambdaTargetDeps } from '../lib/delivery-deps.js';

export const makeDeliveryHandler = deliveryStep(persistEvidence);
export const handler = makeDeliveryHandler(lambdaTargetDeps);
