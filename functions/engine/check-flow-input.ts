import { firstTaskInput } from '../../src/engine/flow-input.js';
import type { Ports } from '../../src/ports/index.js';
import type { StepHandler } from '../lib/step.js';
import { lambdaHandler } from '../lib/telemetry.js';

/**
 * The first Task of a flow whose other Tasks are not Lambdas of ours (stream-maintain: they
 * start child flows): the execution input's check (README "Flow inputs") as a Task of its
 * own. It reads and writes nothing, so it builds no ports; the flow discards its result
 * (ResultPath null).
 */
export const makeHandler = (_ports: () => Promise<Ports>): StepHandler =>
  lambdaHandler(async (event: unknown) => {
    firstTaskInput(event);
    return { checked: true };
  });
export const handler = makeHandler(() => Promise.reject(new Error('the input check builds no ports')));
