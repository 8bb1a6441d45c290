import { forEachConcurrently } from '../../engine/concurrently.js';
import { rerunTransient } from '../../engine/rerun.js';
import type { DeliveryDeps } from '../deps.js';
import { forRerun, loadForStep, output, type StepInput, type StepOutput } from '../steps/common.js';
import { readPlan } from '../steps/plan-parts.js';
import { extractLoadPart } from './extract-load-part.js';

/**
 * The in-process form of the deliver-window flow's Distributed Map (the library run and
 * the bench; the flow runs the same `extractLoadPart` once per plan item): every part of
 * the journaled plan, at most the route's `max_concurrency` at once, each rerun after a
 * transient error as the Map's item Retry would. Without a plan there is nothing to run
 * (an invocation that never started its writer): the step does not act.
 */
export async function extractLoadParts(input: StepInput, deps: DeliveryDeps): Promise<StepOutput> {
  const { record } = await loadForStep(input, deps);
  if (!record.facts.plan) {
    // No plan in what it carried: the plan may be journaled since; only a read says there is none.
    return input.known ? extractLoadParts(forRerun(input), deps) : output(input, record, false);
  }
  const parts = await readPlan(deps, record);
  let acted = false;
  await forEachConcurrently(parts, deps.route.route.maxConcurrency, async (part) => {
    const out = await rerunTransient((attempt) =>
      extractLoadPart({ ...(attempt === 1 ? input : forRerun(input)), part }, deps),
    );
    acted ||= out.acted;
  });
  // Parts never write the invocation: the record read (or carried) above is still current.
  return output(input, record, acted);
}
