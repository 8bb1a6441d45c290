import { firstTaskInput } from '../../src/engine/flow-input.js';
import type { HandlerNeeds, StepHandler } from '../../src/registry/handler-contract.js';
import { lambdaHandler } from '../lib/telemetry.js';

/**
 * The first Task of a flow whose other Tasks are not Lambdas of ours (stream-maintain: they
 * start child flows): the execution input's check (docs/deploy.md "Flow inputs") as a Task of its
 * own. It reads and writes nothing, so it needs nothing (registry `needs: 'nothing'`); the
 * flow discards its result (ResultPath null).
 */
export const makeHandler = (_needs: HandlerNeeds): StepHandler =>
  lambdaHandler(async (event: unknown) => {
    firstTaskInput(event);
    return { checked: true };
  });
export const handler = makeHandler({});
