import { flowStep } from '../../src/delivery/steps/flow-stop.js';
import { prepareCapsule } from '../../src/quality/steps/prepare-capsule.js';
import { deliveryStep, lambdaTargetDeps } from '../lib/delivery-deps.js';

export const makeHandler = deliveryStep(flowStep(prepareCapsule));
export const handler = makeHandler({ delivery: lambdaTargetDeps });
