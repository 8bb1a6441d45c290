import { verifyEof } from '../../src/delivery/steps/verify-eof.js';
import { deliveryStep, lambdaTargetDeps } from '../lib/delivery-deps.js';

export const makeDeliveryHandler = deliveryStep(verifyEof);
export const handler = makeDeliveryHandler(lambdaTargetDeps);
