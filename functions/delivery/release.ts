import { release } from '../../src/delivery/steps/release.js';
import { deliveryStep, lambdaDeliveryDeps } from '../lib/delivery-deps.js';

export const makeDeliveryHandler = deliveryStep(release);
export const handler = makeDeliveryHandler(lambdaDeliveryDeps);
