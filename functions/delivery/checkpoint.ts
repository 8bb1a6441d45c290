import { checkpoint } from '../../src/delivery/steps/checkpoint.js';
import { flowStep } from '../../src/delivery/steps/flow-stop.js';
import { deliveryStep, lambdaTargetDeps } from '../lib/delivery-deps.js';

export const makeHandler = deliveryStep(flowStep(checkpoint));
export const handler = makeHandler({ delivery: lambdaTargetDeps });
