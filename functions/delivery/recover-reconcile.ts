import { executionInputFirst } from '../../src/engine/flow-input.js';
import { recoveryFlowStep, recoveryInputFirst } from '../../src/delivery/recovery/flow-steps.js';
import { deliveryStep, lambdaTargetDeps, type DeliveryDepsProvider } from '../lib/delivery-deps.js';

/** The delivery-reconcile flow's action step: source-free deps (the target only). */
/** Its execution input (against the flow's fields), then its input (yes, id), are checked before the deps provider parses the manifest or reads a secret. */
export const makeDeliveryHandler = (deps: DeliveryDepsProvider) =>
  deliveryStep(recoveryFlowStep('reconcile'))(executionInputFirst(recoveryInputFirst('reconcile', deps)));
export const handler = makeDeliveryHandler(lambdaTargetDeps);
