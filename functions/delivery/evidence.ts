import { persistEvidence } from '../../src/delivery/steps/evidence.js';
import { flowStep } from '../../src/delivery/steps/flow-stop.js';
import { deliveryStep, lambdaTargetDeps } from '../lib/delivery-deps.js';

export const makeHandler = deliveryStep(flowStep(persistEvidence));
export const handler = makeHandler({ delivery: lambdaTargetDeps });
