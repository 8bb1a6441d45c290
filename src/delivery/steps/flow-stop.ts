import type { JournalState } from '../../domain/delivery/journal-states.js';
import { CutpointError } from '../../domain/errors.js';
import type { DropStatus } from '../../domain/delivery/target-types.js';
import type { DeliveryDeps } from '../deps.js';
import type { StepOutput } from './common.js';

/** The run ended short of CUSTODY_RELEASED; the journal says what is safe next (reconcile, or an operator). */
export class NeedsRecoveryError extends CutpointError {
  constructor(message: string) {
    super('Delivery.NeedsRecovery', 'delivery.needs_recovery', message);
  }
}

/** Cleanup could not prove the owned stage absent; release would refuse, custody stays held. */
export class CleanupUnprovedError extends CutpointError {
  constructor(message: string) {
    super('Delivery.CleanupUnproved', 'delivery.cleanup_unproved', message);
  }
}

/**
 * States the deliver-window flow cannot carry on from: only reconcile, retire or an
 * operator resolves them (and a retired invocation is over: a new one delivers the window).
 */
export const FLOW_STOP_STATES: ReadonlySet<JournalState> = new Set([
  'PARTIAL_PROVED',
  'REEXTRACT_REQUIRED',
  'PUBLICATION_UNKNOWN',
  'INCIDENT_RETAINED',
  'RETIRED',
]);

type Step<I, O extends StepOutput> = (input: I, deps: DeliveryDeps) => Promise<O>;

/**
 * A deliver-window step as the flow runs it: the step's own result, or a typed stop the
 * flow's Catch routes on (instead of a Choice after every Task — one transition less per
 * step): Delivery.NeedsRecovery when the journal is in a state the flow cannot carry on
 * from (FLOW_STOP_STATES, or anything but CUSTODY_RELEASED after the last step),
 * Delivery.CleanupUnproved when cleanup's drop did not prove absence. The in-process run
 * (deliver-in-process.ts) calls the steps themselves and reads their states instead.
 */
export function flowStep<I, O extends StepOutput & { drop?: DropStatus }>(
  step: Step<I, O>,
  options: { last?: boolean } = {},
): Step<I, O> {
  return async (input, deps) => {
    const out = await step(input, deps);
    // A failed quality check is named: the stop explains itself (never a value, only the rule or the target's reason).
    const failures = (out as { failures?: unknown }).failures;
    const why = Array.isArray(failures) && failures.length > 0 ? ` (quality failed: ${failures.join('; ')})` : '';
    const needsRecovery = () =>
      new NeedsRecoveryError(
        `invocation ${out.invocationId} on target ${out.targetId} stopped in ${out.state}${why}; start reconcile`,
      );
    if (FLOW_STOP_STATES.has(out.state)) throw needsRecovery();
    if (out.drop !== undefined && out.drop !== 'ABSENT_PROVED' && out.drop !== 'ATTACHED') {
      throw new CleanupUnprovedError(
        `invocation ${out.invocationId} on target ${out.targetId}: owned stage drop ended ${out.drop}; start reconcile`,
      );
    }
    if (options.last === true && out.state !== 'CUSTODY_RELEASED') throw needsRecovery();
    return out;
  };
}
