import { planPartsStep } from '../../src/delivery/steps/plan-parts.js';
import { flowStep } from '../../src/delivery/steps/flow-stop.js';
import { deliveryStep, lambdaSourceDeps } from '../lib/delivery-deps.js';

export const makeHandler = deliveryStep(flowStep(planPartsStep));
export const handler = makeHandler({ delivery: lambdaSourceDeps });
