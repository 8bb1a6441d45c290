import { transition } from '../delivery/journal/transition.js';
import type { InvocationRecord } from '../delivery/journal/records.js';
import { knownOf, RecoveryRetainedError, type RecoveryContext } from '../delivery/recovery/recovery-session.js';
import { transitionIdOf } from '../delivery/steps/common.js';
import { CutpointError, EffectFailedError, OutcomeUnknownError } from '../domain/errors.js';
import { ObservationFailedError } from '../domain/publication/errors.js';
import { exchangeOf, namesOf } from './exchange-deps.js';
import { recordObservation } from './observe-publication.js';

/**
 * The exchange mode's `reconcilePublication`: `reconcile` of a dispatched ClickHouse
 * operation (PUBLICATION_UNKNOWN with its dispatch intent; docs/delivery.md, 'Delivery recovery: the five commands and the flows behind them'). Observes, never dispatches:
 * - COMMIT_PROVEN → PUBLISHED (journaled by recordObservation); CONTRADICTED →
 *   INCIDENT_RETAINED (exit 1, custody kept).
 * - NOT_APPLIED_YET is not proof of never — the EXCHANGE may be delayed in flight — so the
 *   candidate is FENCED first: RENAME to the tombstone name (`publication.fence.rename`),
 *   after which a late EXCHANGE naming the candidate fails UNKNOWN_TABLE. Then one more
 *   observation decides: the tombstone holds C → NOT_PUBLISHED_FENCED → REEXTRACT_REQUIRED
 *   (retire, then a NEW operation publishes; this one is never dispatched again); the late
 *   EXCHANGE landed before the rename → COMMIT_PROVEN → PUBLISHED.
 * - The observation cannot be made (a read failure, a Keeper error): exit 1, the state
 *   unchanged, repeat later — an observation failure never authorizes anything.
 */
export async function reconcileExchange(ctx: RecoveryContext): Promise<InvocationRecord> {
  // The custody the takeover just wrote is the check before the fence rename (as a step's
  // carried custody is), and the observation's journal write carries it as its fence leg.
  const { deps, fence, custody } = ctx;
  const first = await recordObservation(deps, ctx.record, fence, custody);
  if (first.observed === 'NOT_APPLIED_YET') {
    try {
      await exchangeOf(deps).fenceRename(namesOf(ctx.record.invocationId, deps));
    } catch (error) {
      // Refused or unknown: the observation below says where the candidate is.
      if (!(error instanceof OutcomeUnknownError) && !(error instanceof EffectFailedError)) throw error;
    }
    const second = await recordObservation(deps, ctx.record, fence, custody);
    return conclude(ctx, second);
  }
  return conclude(ctx, first);
}

/** What the observation proves, journaled; the record as the last write left it. */
async function conclude(
  ctx: RecoveryContext,
  { observed, result }: Awaited<ReturnType<typeof recordObservation>>,
): Promise<InvocationRecord> {
  switch (observed) {
    case 'COMMIT_PROVEN':
      // recordObservation journaled PUBLISHED.
      if (!result) throw new Error('bug: a proven commit is journaled by recordObservation');
      return result.invocation;
    case 'CONTRADICTED':
      throw new RecoveryRetainedError(
        'publication.contradicted',
        'system.tables contradicts every history of this operation',
        'INCIDENT_RETAINED',
      );
    case 'NOT_PUBLISHED_FENCED':
      return (
        await transition(ctx.deps.ports, ctx.ref, {
          from: 'PUBLICATION_UNKNOWN',
          to: 'REEXTRACT_REQUIRED',
          fence: ctx.fence,
          transitionId: transitionIdOf('reconcile-not-published-fenced', ctx.record.invocationId),
          known: knownOf(ctx),
        })
      ).invocation;
    case 'NOT_APPLIED_YET':
      throw new CutpointError(
        'Publication.DispatchUnknown',
        'publication.dispatch_unknown',
        'the candidate could not be fenced yet: the publication is still unproved either way; repeat reconcile',
      );
    case 'UNOBSERVABLE':
      throw new ObservationFailedError('system.tables could not be read: nothing is concluded; repeat reconcile');
  }
}
