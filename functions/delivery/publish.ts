import { publish } from '../../src/delivery/steps/publish.js';
import { flowStep } from '../../src/delivery/steps/flow-stop.js';
import { deliveryStep, lambdaTargetDeps } from '../lib/delivery-deps.js';

export const makeDeliveryHandler = deliveryStep(flowStep(publish));
export const handler = makeDeliveryHandler(lambdaTargetDeps);
