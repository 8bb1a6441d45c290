import type { JournalState } from '../domain/delivery/journal-states.js';
import type { SealedWindow } from '../domain/delivery/window.js';
import { inFlowOrder } from '../engine/flow-path.js';
import { rerunTransient } from '../engine/rerun.js';
import deliverWindowFlow from '../../statemachines/deliver-window.asl.json' with { type: 'json' };
import type { DropStatus } from '../domain/delivery/target-types.js';
import type { DeliveryDeps } from './deps.js';
import { begin, type BeginInput } from './steps/begin.js';
import { checkpoint } from './steps/checkpoint.js';
import { cleanup } from './steps/cleanup.js';
import { forRerun, type StepInput, type StepOutput } from './steps/common.js';
import { createStaging } from './steps/create-staging.js';
import { persistEvidence } from './steps/evidence.js';
import { extractLoadParts } from './parts/extract-load-parts.js';
import { planPartsStep } from './steps/plan-parts.js';
import { publish } from './steps/publish.js';
import { quality } from './steps/quality.js';
import { verifyEof } from './steps/verify-eof.js';

export type DeliveryStepName =
  | 'begin'
  | 'create-staging'
  | 'plan-parts'
  | 'extract-load-parts'
  | 'verify-eof'
  | 'quality'
  | 'publish'
  | 'fill-candidate'
  | 'prepare-capsule'
  | 'dispatch'
  | 'observe-target'
  | 'evidence'
  | 'checkpoint'
  | 'cleanup';

export type Step = (
  input: StepInput,
  deps: DeliveryDeps,
) => Promise<StepOutput & { drop?: DropStatus; failures?: string[]; problems?: string[] }>;

/** The steps of a run, in flow order: deliver-window's here, publish-clickhouse's in src/publication/publication-steps.ts (a route's: `deps.mode.steps`). */
export type StepList = ReadonlyArray<readonly [DeliveryStepName, Step]>;

/**
 * The steps after begin, in deliver-window's order (its success path, read from the
 * generated ASL: statemachines/flows/deliver-window.ts): the SQL transaction mode's. Each
 * Task's in-process step, by handler; the Map's part Task runs every part in turn here.
 */
export const DELIVERY_STEPS: StepList = inFlowOrder<StepList[number]>(
  'deliver-window',
  deliverWindowFlow,
  {
    'delivery/create-staging': ['create-staging', createStaging],
    'delivery/plan-parts': ['plan-parts', planPartsStep],
    'delivery/extract-load-part': ['extract-load-parts', extractLoadParts],
    'delivery/verify-eof': ['verify-eof', verifyEof],
    'delivery/quality': ['quality', quality],
    'delivery/publish': ['publish', publish],
    'delivery/evidence': ['evidence', persistEvidence],
    'delivery/checkpoint': ['checkpoint', checkpoint],
    'delivery/cleanup': ['cleanup', cleanup],
  },
  1,
);

export interface DeliveryRun {
  invocationId: string;
  targetId: string;
  state: JournalState;
  /** When the run ended short of CUSTODY_RELEASED: the first step that reported the final state. */
  stoppedAt?: DeliveryStepName;
  /** Why (names only): failed quality rules, EOF problems, or the cleanup drop status. */
  reasons?: string[];
  /** Per step: whether it acted (false: its work was already journaled, or not its turn). */
  steps: Array<{ step: DeliveryStepName; state: JournalState; acted: boolean }>;
}

/**
 * Runs the steps after begin, in order, each rerun after a transient error as the flow's
 * Retry would (every step reloads the journal first, so a rerun is safe). Every step runs:
 * one whose turn it is not returns without acting, so a state that needs an operator
 * (PARTIAL_PROVED, REEXTRACT_REQUIRED, PUBLICATION_UNKNOWN without a receipt,
 * INCIDENT_RETAINED) simply ends the run in that state, and a PUBLICATION_UNKNOWN whose
 * receipt is found is carried on to the end; cleanup that could not prove absence ends it
 * in SUCCEEDED with custody held (the drop status is the reason). Used by the normal run and, with
 * source-free deps, by a recovery `resume` after it has taken custody and checked the
 * sealed authority.
 */
export async function runDeliverySteps(
  input: StepInput,
  deps: DeliveryDeps,
  initial: DeliveryRun['steps'] = [],
  list: StepList = deps.mode.steps,
): Promise<DeliveryRun> {
  const steps = [...initial];
  let last: StepOutput | undefined;
  let reasons: string[] | undefined;
  // What each step left is what the next one carries (steps/carried.ts); a rerun reads.
  let carried: StepInput = {
    invocationId: input.invocationId,
    fence: input.fence,
    ...(input.known ? { known: input.known } : {}),
  };
  for (const [name, step] of list) {
    const out = await rerunTransient((attempt) => step(attempt === 1 ? carried : forRerun(carried), deps));
    carried = { invocationId: out.invocationId, fence: out.fence, ...(out.known ? { known: out.known } : {}) };
    last = out;
    steps.push({ step: name, state: out.state, acted: out.acted });
    if (out.failures?.length) reasons = out.failures;
    if (out.problems?.length) reasons = out.problems;
    if (name === 'cleanup' && out.drop !== undefined && out.drop !== 'ABSENT_PROVED' && out.drop !== 'ATTACHED')
      reasons = [out.drop];
  }
  const end = last as StepOutput;
  const run: DeliveryRun = { invocationId: end.invocationId, targetId: end.targetId, state: end.state, steps };
  if (end.state !== 'CUSTODY_RELEASED') {
    const first = steps.find((s) => s.step !== 'begin' && s.state === end.state);
    if (first) run.stoppedAt = first.step;
    if (reasons) run.reasons = reasons;
  }
  return run;
}

export interface DeliverWindowResult extends DeliveryRun {
  window: SealedWindow;
}

/**
 * Delivers one window in this process: begin (custody + seal, the window resolved once),
 * then every step of the route's publication mode in flow order — the library form of the
 * deliver-window flow, as appendBatch is for the stream append flow. Idempotent: running it again with the same
 * invocation and session finds every step's work journaled and changes nothing. Another
 * invocation holding the target is Delivery.CustodyHeld (nothing written).
 */
export async function deliverWindow(input: BeginInput, deps: DeliveryDeps): Promise<DeliverWindowResult> {
  const begun = await rerunTransient(() => begin(input, deps));
  const run = await runDeliverySteps(begun, deps, [{ step: 'begin', state: begun.state, acted: begun.acted }]);
  return { ...run, window: begun.window };
}
