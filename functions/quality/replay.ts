import { executionInputFirst } from '../../src/engine/flow-input.js';
import { readOnlyInputFirst, replayStep } from '../../src/quality/steps/read-only.js';
import { deliveryStep, lambdaTargetDeps } from '../lib/delivery-deps.js';

export const makeHandler = deliveryStep(replayStep, (d) =>
  executionInputFirst(readOnlyInputFirst('quality-replay')(d)),
);
export const handler = makeHandler({ delivery: lambdaTargetDeps });
