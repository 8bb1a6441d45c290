import { flowStep } from '../../src/delivery/steps/flow-stop.js';
import { fillCandidate } from '../../src/publication/steps/fill-candidate.js';
import { deliveryStep, lambdaTargetDeps } from '../lib/delivery-deps.js';

export const makeHandler = deliveryStep(flowStep(fillCandidate));
export const handler = makeHandler({ delivery: lambdaTargetDeps });
