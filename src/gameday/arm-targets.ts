import { parseFaultSpec } from '../domain/faults.js';
import { STEPS } from '../registry/index.js';
import { everyCutPoint } from '../registry/step-entry.js';
import { stepNameOf } from '../telemetry/step-name.js';

/** A deployed function that may arm faults, with the step it runs (its CUTPOINT_STEP; absent: not a registry step). */
export interface ArmableFunction {
  name: string;
  step?: string;
}

/**
 * The functions a fault spec needs armed on a deployed stage: those whose registry step
 * crosses one of the spec's cut points (src/registry/, the same `cutPoints` the fault
 * matrices and the flow pictures use), and every function that runs no registry step (it
 * cannot be ruled out). A drill then updates a few functions' environments, not the whole
 * stage's, twice. A spec whose cut points no Lambda crosses (the local runner's own, such
 * as a Map's result write) selects none.
 */
export function functionsToArm(spec: string, functions: readonly ArmableFunction[]): string[] {
  const cutPoints = new Set(parseFaultSpec(spec).map((rule) => rule.cutPoint));
  const crosses = new Map(STEPS.map((s) => [stepNameOf(s.placeholder), everyCutPoint(s.cutPoints)]));
  return functions
    .filter((f) => {
      const stepCuts = f.step === undefined ? undefined : crosses.get(f.step);
      return stepCuts === undefined || stepCuts.some((c) => cutPoints.has(c));
    })
    .map((f) => f.name);
}
