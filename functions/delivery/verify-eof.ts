import { verifyEof } from '../../src/delivery/steps/verify-eof.js';
import { deliveryStep, lambdaDeliveryDeps } from '../lib/delivery-deps.js';

export const makeDeliveryHandler = deliveryStep(verifyEof);
export const handler = makeDeliveryHandler(lambdaDeliveryDeps);
