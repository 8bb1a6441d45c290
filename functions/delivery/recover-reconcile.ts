import { executionInputFirst } from '../../src/engine/flow-input.js';
import { recoveryFlowStep, recoveryInputFirst } from '../../src/delivery/recovery/flow-steps.js';
import { deliveryStep, lambdaTargetDeps } from '../lib/delivery-deps.js';

/** The delivery-reconcile flow's action step: source-free deps (the target only). */
/** Its execution input (against the flow's fields), then its input (yes, id), are checked before the deps provider parses the manifest or reads a secret. */
export const makeHandler = deliveryStep(recoveryFlowStep('reconcile'), (deps) =>
  executionInputFirst(recoveryInputFirst('reconcile', deps)),
);
export const handler = makeHandler({ delivery: lambdaTargetDeps });
