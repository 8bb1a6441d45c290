import { publish } from '../../src/delivery/steps/publish.js';
import { flowStep } from '../../src/delivery/steps/flow-stop.js';
import { deliveryStep, lambdaTargetDeps } from '../lib/delivery-deps.js';

export const makeHandler = deliveryStep(flowStep(publish));
export const handler = makeHandler({ delivery: lambdaTargetDeps });
