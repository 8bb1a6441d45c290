import { flowStep } from '../../src/delivery/steps/flow-stop.js';
import { dispatch } from '../../src/publication/steps/dispatch.js';
import { deliveryStep, lambdaTargetDeps } from '../lib/delivery-deps.js';

export const makeHandler = deliveryStep(flowStep(dispatch));
export const handler = makeHandler({ delivery: lambdaTargetDeps });
