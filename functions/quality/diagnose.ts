import { executionInputFirst } from '../../src/engine/flow-input.js';
import { diagnoseStep, readOnlyInputFirst } from '../../src/quality/steps/read-only.js';
import { deliveryStep, lambdaTargetDeps } from '../lib/delivery-deps.js';

export const makeHandler = deliveryStep(diagnoseStep, (d) =>
  executionInputFirst(readOnlyInputFirst('quality-diagnose')(d)),
);
export const handler = makeHandler({ delivery: lambdaTargetDeps });
