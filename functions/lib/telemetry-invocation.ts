import { AsyncLocalStorage } from 'node:async_hooks';
import type { FaultInjector } from '../../src/ports/faults.js';
import { cutPointOutcomeOf } from '../../src/telemetry/classify.js';
import type { CutPointOutcome } from '../../src/telemetry/metric-names.js';

/**
 * One handler invocation as telemetry sees it: the cut points it crossed, counted per
 * outcome. Held in an AsyncLocalStorage for the invocation (the local runner may run
 * several handlers at once in one process), so the fault-injector port, built once per
 * cold start, reports into the invocation that called it.
 */
export interface Invocation {
  cutPoints: Map<CutPointOutcome, number>;
  /** Called on each crossing; the telemetry middleware logs it (no-op when telemetry is off). */
  onCrossed: (cutPoint: string, outcome: CutPointOutcome) => void;
}

const invocations = new AsyncLocalStorage<Invocation>();

export function runInvocation<T>(run: () => Promise<T>): Promise<T> {
  return invocations.run({ cutPoints: new Map(), onCrossed: () => undefined }, run);
}

export function currentInvocation(): Invocation | undefined {
  return invocations.getStore();
}

function crossed(cutPoint: string, outcome: CutPointOutcome): void {
  const invocation = invocations.getStore();
  if (!invocation) return;
  invocation.cutPoints.set(outcome, (invocation.cutPoints.get(outcome) ?? 0) + 1);
  invocation.onCrossed(cutPoint, outcome);
}

/**
 * The fault-injector port, observed: every effect already runs through `at(cutPoint,
 * effect)`, so wrapping the port classifies every cut point a handler crosses — applied,
 * unknown (Cutpoint.OutcomeUnknown), failed (Cutpoint.EffectFailed or a definite driver
 * error), crashed (Cutpoint.WorkerCrashed) — without touching a use case or an adapter.
 * The error passes through unchanged.
 */
export function observedFaults(inner: FaultInjector): FaultInjector {
  return {
    at<T>(cutPoint: string, effect: () => Promise<T>): Promise<T> {
      return Promise.resolve()
        .then(() => inner.at(cutPoint, effect))
        .then(
          (result) => {
            crossed(cutPoint, 'applied');
            return result;
          },
          (error: unknown) => {
            crossed(cutPoint, cutPointOutcomeOf(error));
            throw error;
          },
        );
    },
  };
}
