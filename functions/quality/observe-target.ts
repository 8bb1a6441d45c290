import { flowStep } from '../../src/delivery/steps/flow-stop.js';
import { observeTargetStep } from '../../src/quality/steps/observe-target.js';
import { deliveryStep, lambdaTargetDeps } from '../lib/delivery-deps.js';

export const makeDeliveryHandler = deliveryStep(flowStep(observeTargetStep));
export const handler = makeDeliveryHandler(lambdaTargetDeps);
