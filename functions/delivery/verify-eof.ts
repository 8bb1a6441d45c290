import { verifyEof } from '../../src/delivery/steps/verify-eof.js';
import { flowStep } from '../../src/delivery/steps/flow-stop.js';
import { deliveryStep, lambdaTargetDeps } from '../lib/delivery-deps.js';

export const makeHandler = deliveryStep(flowStep(verifyEof));
export const handler = makeHandler({ delivery: lambdaTargetDeps });
