import { checkpoint } from '../../src/delivery/steps/checkpoint.js';
import { flowStep } from '../../src/delivery/steps/flow-stop.js';
import { deliveryStep, lambdaTargetDeps } from '../lib/delivery-deps.js';

export const makeDeliveryHandler = deliveryStep(flowStep(checkpoint));
export const handler = makeDeliveryHandler(lambdaTargetDeps);
