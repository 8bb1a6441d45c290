import { quality } from '../../src/delivery/steps/quality.js';
import { flowStep } from '../../src/delivery/steps/flow-stop.js';
import { deliveryStep, lambdaTargetDeps } from '../lib/delivery-deps.js';

export const makeHandler = deliveryStep(flowStep(quality));
export const handler = makeHandler({ delivery: lambdaTargetDeps });
