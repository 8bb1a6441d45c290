import type { JournalState, RecoveryFacts } from './journal-states.js';

/*
 * Continue (README "Delivery recovery"): when PARTIAL_PROVED may go on with its unfinished
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
