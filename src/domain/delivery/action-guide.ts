import { CutpointError } from '../errors.js';
import type { JournalState } from './journal-states.js';

/*
 * The state-to-action guide (docs/rules.md#state-to-action): which live action each
 * journal state offers, the diagnostic code inspect prints for it, and the refusals of an
 * action the guide does not offer or an operator did not confirm. The states and their
 * edges are journal-states.ts.
 */

export const RECOVERY_ACTIONS = ['inspect', 'reconcile', 'resume', 'retire'] as const;
export type RecoveryAction = (typeof RECOVERY_ACTIONS)[number];
/** Actions that take the lease and custody and may touch the target. */
export type LiveAction = Exclude<RecoveryAction, 'inspect'>;

/**
 * Journal facts beyond the state that decide whether an action is "offered".
 * - ownedStagesRecorded: every owned stage has its exact object ID and owner binding
 *   recorded. Retirement "locks and rechecks the exact recorded object ID and owner
 *   binding"; in PARTIAL_PROVED and REEXTRACT_REQUIRED (a writer ran against the stage)
 *   it cannot prove it drops only what it owns without that record, so retire is not
 *   offered there. EMPTY_STAGING always offers retire: a crash between CREATE and the
 *   journal write leaves the stage unrecorded but nothing was written into it, and retire
 *   observes it by its derived name and owner marker (the binding is recomputed from the
 *   seal), journals its object id, and drops exactly that — "no durable state without a
 *   safe action or an incident".
 */
export interface RecoveryFacts {
  ownedStagesRecorded: boolean;
  /**
   * PARTIAL_PROVED only: recorded with the transition into it when the observation proved
   * continuing safe — every observed chunk a journaled chunk holding exactly its receipt's
   * rows, the plan journaled, `unfinishedParts` parts short of EOF and `rowsProved` rows
   * journaled. Absent: PARTIAL_PROVED offers retire only (`delivery.partial_not_continuable`).
   */
  continuable?: ContinuableFact;
}

/**
 * The state-to-action guide. `inspect` is read-only, always allowed and never
 * listed: `permitted_actions` lists live actions only, so an empty list means "no
 * permitted live action" (terminal, or an incident to escalate).
 */
export function permittedActions(state: JournalState, facts: RecoveryFacts): LiveAction[] {
  switch (state) {
    case 'EMPTY_STAGING': // Retire the exact empty owned stage when offered.
      return ['retire'];
    case 'PARTIAL_PROVED': // Retire exact owned stages, then start a new complete invocation; or continue when proved safe.
      if (!facts.ownedStagesRecorded) return [];
      return continuable(facts) ? ['retire', 'resume'] : ['retire'];
    case 'REEXTRACT_REQUIRED': // Retire when offered, then start a new complete invocation.
      return facts.ownedStagesRecorded ? ['retire'] : [];
    case 'WRITING_UNKNOWN': // Reconcile first. Never replay target mutation blindly.
    case 'PUBLICATION_UNKNOWN': // Reconcile the exact transaction receipt first.
      return ['reconcile'];
    case 'VERIFIED_EOF': // Resume preparation and publication from contiguous receipts.
    case 'PUBLISHED': // Resume idempotent evidence and checkpoint completion.
    case 'SUCCEEDED': // Resume until cleanup and custody release are durable.
      return ['resume'];
    case 'RETIRED':
    case 'CUSTODY_RELEASED': // No target replay is required.
    case 'INCIDENT_RETAINED': // Preserve everything; escalate.
      return [];
  }
}

const STATE_CODES: Record<JournalState, string> = {
  EMPTY_STAGING: 'delivery.empty_staging',
  WRITING_UNKNOWN: 'delivery.writing_unknown',
  PARTIAL_PROVED: 'delivery.partial_proved',
  VERIFIED_EOF: 'delivery.verified_eof',
  REEXTRACT_REQUIRED: 'delivery.reextract_required',
  PUBLICATION_UNKNOWN: 'delivery.publication_unknown',
  PUBLISHED: 'delivery.published',
  SUCCEEDED: 'delivery.succeeded',
  RETIRED: 'delivery.retired',
  CUSTODY_RELEASED: 'delivery.custody_released',
  INCIDENT_RETAINED: 'delivery.incident_retained',
};

/**
 * The stable `diagnostic_code` inspect prints for a state. With facts, a retire-only
 * state whose owned stages are not recorded reports `delivery.owned_stage_unrecorded`:
 * that is the code an operator escalates with, since no live action is offered.
 */
export function diagnosticCodeFor(state: JournalState, facts?: RecoveryFacts): string {
  if (facts && !facts.ownedStagesRecorded && (state === 'PARTIAL_PROVED' || state === 'REEXTRACT_REQUIRED')) {
    return 'delivery.owned_stage_unrecorded';
  }
  if (facts && state === 'PARTIAL_PROVED' && !continuable(facts)) return 'delivery.partial_not_continuable';
  return STATE_CODES[state];
}

export class ActionNotPermittedError extends CutpointError {
  constructor(
    readonly action: RecoveryAction,
    readonly state: JournalState,
    readonly permitted: readonly LiveAction[],
  ) {
    super(
      'Delivery.ActionNotPermitted',
      'delivery.recovery_action_not_permitted',
      `${action} is not permitted in state ${state}; permitted_actions: [${permitted.join(', ')}]`,
    );
  }
}

/**
 * The state a live action ends in where running it again is the same action repeated, not
 * a refusal: `retire` on RETIRED. Retire's last effect is a look after the RETIRED write
 * (a fenced CreateStaging may have re-created the stage just before it); a retire that
 * crashed between the two is completed by running it again, as the operator re-runs a
 * command that died and the delivery-retire flow retries a crashed Task. The repeat takes
 * no custody and moves no state: it only looks again (recovery/retire.ts). Not listed in
 * `permitted_actions`: nothing is left to do on a completed retire.
 */
const REPEATABLE_ON: Partial<Record<LiveAction, JournalState>> = { retire: 'RETIRED' };

/** Whether `action` in `state` repeats the action that completed there (REPEATABLE_ON). */
export function repeatsCompleted(state: JournalState, action: RecoveryAction): boolean {
  return action !== 'inspect' && REPEATABLE_ON[action] === state;
}

/**
 * Refuses a live action the state-to-action guide does not list. `inspect` always passes,
 * and so does the repeat of a completed action (REPEATABLE_ON).
 */
export function assertActionPermitted(state: JournalState, facts: RecoveryFacts, action: RecoveryAction): void {
  if (action === 'inspect' || repeatsCompleted(state, action)) return;
  const permitted = permittedActions(state, facts);
  if (!permitted.includes(action)) throw new ActionNotPermittedError(action, state, permitted);
}

export class ConfirmationRequiredError extends CutpointError {
  constructor(readonly action: LiveAction) {
    super(
      'Delivery.ConfirmationRequired',
      'delivery.recovery_confirmation_required',
      `${action} changes target custody; repeat it with --yes to confirm`,
    );
  }
}

/**
 * Live actions need explicit confirmation. Checked first, before the manifest is loaded
 * or the journal opened, so a missing --yes has no side effect and costs nothing.
 */
export function assertConfirmed(action: LiveAction, yes: boolean | undefined): void {
  if (yes !== true) throw new ConfirmationRequiredError(action);
}

/*
 * Continue (docs/delivery.md "Delivery recovery: the five commands and the flows behind them"): when PARTIAL_PROVED may go on with its unfinished
 * parts instead of being retired, as the journal recorded it, and why not where it may not.
 */

/** What a continuable PARTIAL_PROVED proved (RecoveryFacts.continuable). */
export interface ContinuableFact {
  unfinishedParts: number;
  rowsProved: number;
}

/** Whether PARTIAL_PROVED may continue (`resume`): the owned stage recorded and the continuation proved. */
export function continuable(facts: RecoveryFacts): boolean {
  return facts.ownedStagesRecorded && facts.continuable !== undefined && facts.continuable.unfinishedParts > 0;
}

/**
 * Why a PARTIAL_PROVED cannot continue (printed by inspect as `diagnostic_reason` next to
 * `delivery.partial_not_continuable`); undefined everywhere else.
 */
export function diagnosticReasonFor(state: JournalState, facts: RecoveryFacts): string | undefined {
  if (state !== 'PARTIAL_PROVED' || !facts.ownedStagesRecorded || continuable(facts)) return undefined;
  return 'no continuation is proved: every part reached EOF and the stage does not match its receipts (or the stop was journaled without the proof); continuing would extract nothing it could trust — retire, then deliver the window again';
}
