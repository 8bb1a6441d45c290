import { release } from '../../src/delivery/steps/release.js';
import { deliveryStep, lambdaTargetDeps } from '../lib/delivery-deps.js';

export const makeDeliveryHandler = deliveryStep(release);
export const handler = makeDeliveryHandler(lambdaTargetDeps);
