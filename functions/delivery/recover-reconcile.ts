import { recoveryFlowStep } from '../../src/delivery/recovery/flow-steps.js';
import { deliveryStep, lambdaTargetDeps } from '../lib/delivery-deps.js';

/** The delivery-reconcile flow's action step: source-free deps (the target only). */
export const makeDeliveryHandler = deliveryStep(recoveryFlowStep('reconcile'));
export const handler = makeDeliveryHandler(lambdaTargetDeps);
