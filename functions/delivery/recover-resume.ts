import { recoveryFlowStep, recoveryInputFirst } from '../../src/delivery/recovery/flow-steps.js';
import { deliveryStep, lambdaTargetDeps, type DeliveryDepsProvider } from '../lib/delivery-deps.js';

/** The delivery-resume flow's action step: source-free deps (the target only). */
/** Its input (yes, id) is checked before the deps provider parses the manifest or reads a secret. */
export const makeDeliveryHandler = (deps: DeliveryDepsProvider) => deliveryStep(recoveryFlowStep('resume'))(recoveryInputFirst('resume', deps));
export const handler = makeDeliveryHandler(lambdaTargetDeps);
