import { flowStep } from '../../src/delivery/steps/flow-stop.js';
import { dispatch } from '../../src/publication/steps/dispatch.js';
import { deliveryStep, lambdaTargetDeps } from '../lib/delivery-deps.js';

export const makeDeliveryHandler = deliveryStep(flowStep(dispatch));
export const handler = makeDeliveryHandler(lambdaTargetDeps);
