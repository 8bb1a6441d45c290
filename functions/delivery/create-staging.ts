import { createStaging } from '../../src/delivery/steps/create-staging.js';
import { flowStep } from '../../src/delivery/steps/flow-stop.js';
import { deliveryStep, lambdaTargetDeps } from '../lib/delivery-deps.js';

export const makeHandler = deliveryStep(flowStep(createStaging));
export const handler = makeHandler({ delivery: lambdaTargetDeps });
