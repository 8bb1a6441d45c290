import type { JournalState } from '../../domain/delivery/journal-states.js';
import type { PartsFact } from '../journal/facts.js';
import { receiptMatches } from '../../domain/delivery/target-rules.js';
import type { InvocationRecord } from '../journal/records.js';
import { transition } from '../journal/transition.js';
import { observePartial, verifyParts } from '../parts/verify-parts.js';
import { transitionIdOf } from '../steps/common.js';
import { publicationFactOf, publishRequestOf } from '../steps/publish.js';
import {
  knownOf,
  RecoveryRetainedError,
  runRecovery,
  type RecoveryContext,
  type RecoveryDeps,
  type RecoveryInput,
  type RecoveryResult,
} from './recovery-session.js';

/**
 * `reconcile` (WRITING_UNKNOWN, PUBLICATION_UNKNOWN): observes the target, never mutates
 * it, and journals what the observation proves. PUBLICATION_UNKNOWN is the publication
 * mode's to reconcile (`reconcilePublication`): a dispatched ClickHouse operation's by UUID,
 * with the fence rename before non-publication is concluded
 * (src/publication/reconcile-exchange.ts); the SQL transaction's as follows.
 * - PUBLICATION_UNKNOWN: the exact transaction receipt (`probeReceipt`). Matching →
 *   PUBLISHED with the receipt's facts; a receipt for this invocation that does not match
 *   → INCIDENT_RETAINED (exit 1); none → publication is proved not to have happened (the
 *   receipt is written in the publication transaction), and the stage is re-verified
 *   against the receipts: exact → VERIFIED_EOF (resume), otherwise REEXTRACT_REQUIRED
 *   (retire).
 * - WRITING_UNKNOWN: the owned stage per chunk (`observeChunks`) against the journaled
 *   receipts. EOF journaled and exact → VERIFIED_EOF; every observed chunk is a journaled
 *   chunk holding exactly its receipt's rows but some are missing → PARTIAL_PROVED
 *   (retire; and `resume` — continue — when the observation also proves every journaled
 *   chunk intact and parts short of EOF: the `continuable` fact, verify-parts.ts
 *   `observePartial`); anything else (a chunk no receipt names, a row count no receipt explains,
 *   no recorded stage to observe) → INCIDENT_RETAINED (exit 1).
 */
export async function reconcile(input: RecoveryInput, deps: RecoveryDeps): Promise<RecoveryResult> {
  return runRecovery('reconcile', input, deps, (ctx) =>
    ctx.record.state === 'PUBLICATION_UNKNOWN' ? ctx.deps.mode.reconcilePublication(ctx) : reconcileWriting(ctx),
  );
}

/**
 * Journals the observation, on the record and custody the takeover left (`knownOf`: no
 * read first). The transition id carries the journal position: the PUBLICATION_UNKNOWN →
 * VERIFIED_EOF proof may be needed more than once for one invocation (publish.ts), and
 * each crossing must be journaled, not found "already done". Returns the record it left.
 */
async function move(
  ctx: RecoveryContext,
  to: JournalState,
  step: string,
  patch?: Parameters<typeof transition>[2]['patch'],
): Promise<InvocationRecord> {
  const result = await transition(ctx.deps.ports, ctx.ref, {
    from: ctx.record.state,
    to,
    fence: ctx.fence,
    transitionId: transitionIdOf(step, ctx.record.invocationId, ctx.record.journalSeq),
    ...(patch ? { patch } : {}),
    known: knownOf(ctx),
  });
  return result.invocation;
}

async function incident(ctx: RecoveryContext, step: string, code: string, message: string): Promise<never> {
  await move(ctx, 'INCIDENT_RETAINED', step);
  throw new RecoveryRetainedError(code, message, 'INCIDENT_RETAINED');
}

/**
 * The SQL transaction mode's reconcile of PUBLICATION_UNKNOWN (above): the receipt, else
 * the stage. The target is only read, under the custody the takeover just wrote (the
 * journal write after it carries the fence: a newer session fences it out there).
 */
export async function reconcileReceipt(ctx: RecoveryContext): Promise<InvocationRecord> {
  const { record, deps } = ctx;
  const request = publishRequestOf(record, deps);
  const receipt = await deps.target.probeReceipt(record.invocationId);
  if (receipt) {
    if (!receiptMatches(receipt, request)) {
      await incident(
        ctx,
        'publish-foreign-receipt',
        'delivery.reconcile_receipt_mismatch',
        'the publication receipt for this invocation does not match the journal',
      );
    }
    return move(ctx, 'PUBLISHED', 'publish-reconciled', { publication: publicationFactOf(receipt) });
  }
  const { problems } = await stageProblems(ctx);
  return move(
    ctx,
    problems.length === 0 ? 'VERIFIED_EOF' : 'REEXTRACT_REQUIRED',
    problems.length === 0 ? 'reconcile-unpublished' : 'reconcile-unpublished-reextract',
  );
}

/** The parts' receipts against the stage (verify-parts.ts); unfinished parts are a problem, not an error. */
async function stageProblems(ctx: RecoveryContext): Promise<{ problems: string[]; summary?: PartsFact }> {
  const { record, deps } = ctx;
  const verified = await verifyParts(deps, record);
  return verified.unfinished ? { problems: ['extraction has not reached EOF in every part'] } : verified;
}

async function reconcileWriting(ctx: RecoveryContext): Promise<InvocationRecord> {
  const { record, deps } = ctx;
  if (!record.facts.ownedStagesRecorded || !record.facts.staging) {
    await incident(ctx, 'reconcile-ambiguous', 'delivery.reconcile_ambiguous', 'no recorded owned stage to observe');
  }
  // The stage is only observed, under the custody the takeover just wrote (as above).
  const verified = await stageProblems(ctx);
  if (verified.problems.length === 0 && verified.summary) {
    return move(ctx, 'VERIFIED_EOF', 'verify-eof', { parts: verified.summary });
  }
  const observed = record.facts.plan ? await observePartial(deps, record) : { explained: false };
  if (!observed.explained) {
    await incident(
      ctx,
      'reconcile-ambiguous',
      'delivery.reconcile_ambiguous',
      'the stage holds rows no journaled receipt explains',
    );
  }
  // The continuation proof is the journal's, recorded with the state (journal-states.ts
  // RecoveryFacts.continuable): resume continues only on it, never on a fresh guess.
  return move(
    ctx,
    'PARTIAL_PROVED',
    'verify-partial',
    observed.continuable ? { continuable: observed.continuable } : undefined,
  );
}
