import { release } from '../../src/delivery/steps/release.js';
import { flowStep } from '../../src/delivery/steps/flow-stop.js';
import { deliveryStep, lambdaTargetDeps } from '../lib/delivery-deps.js';

export const makeDeliveryHandler = deliveryStep(flowStep(release, { last: true }));
export const handler = makeDeliveryHandler(lambdaTargetDeps);
