import { JournalUnavailableError, type JournalState } from '../../domain/delivery/journal-states.js';
import { CutpointError } from '../../domain/errors.js';
import type { Fence } from '../../domain/fence.js';
import type { InvocationRef } from './keys.js';

/** The journal's read side: a record or custody item that fails validation. Messages never echo content. */
export const inconsistent = (message: string) =>
  new JournalUnavailableError('delivery.recovery_journal_inconsistent', message);

/** Another invocation holds the target. Names the holder (an opaque id), never journal content. */
export class CustodyHeldError extends CutpointError {
  constructor(
    readonly targetId: string,
    readonly holder: string,
  ) {
    super(
      'Delivery.CustodyHeld',
      'delivery.custody_held',
      `target ${targetId} is in the custody of invocation ${holder}; resolve that invocation first`,
    );
  }
}

/** The caller's fence is not the current custody: a newer session took over, or custody was released. */
export class CustodyFencedError extends CutpointError {
  constructor(ref: InvocationRef, fence: Fence) {
    super(
      'Delivery.Fenced',
      'delivery.custody_fenced',
      `invocation ${ref.invocationId}: custody epoch ${fence.epoch} of target ${ref.targetId} is no longer current; nothing was written`,
    );
  }
}

/** The journal is not in the state the step expected: another session moved it. */
export class JournalStateConflictError extends CutpointError {
  constructor(
    invocationId: string,
    readonly actual: JournalState,
    readonly expected: JournalState,
  ) {
    super(
      'Delivery.JournalStateConflict',
      'delivery.journal_state_conflict',
      `invocation ${invocationId} is in state ${actual}, not ${expected}; nothing was written`,
    );
  }
}

/** A transition whose proof is not journaled yet (e.g. SUCCEEDED before the checkpoint). */
export class TransitionPreconditionError extends CutpointError {
  constructor(message: string) {
    super('Delivery.TransitionPrecondition', 'delivery.transition_precondition_unmet', message);
  }
}

/**
 * A chunk object a part's resume must read back is gone: deleted (or, once chunk retention
 * exists, expired). Its receipt (digest, rows) is still in
 * the journal, but the rows cannot be re-read, so the part cannot resume from it. Distinct
 * from a checksum mismatch (the object is there with other bytes). Nothing was written.
 */
export class EvidenceExpiredError extends CutpointError {
  constructor(
    readonly invocationId: string,
    readonly key: string,
  ) {
    super(
      'Delivery.EvidenceExpired',
      'delivery.chunk_expired',
      `invocation ${invocationId}: chunk object ${key} named by its journal is gone (expired or deleted), so its part cannot resume; retire the invocation, then run the window again`,
    );
  }
}
