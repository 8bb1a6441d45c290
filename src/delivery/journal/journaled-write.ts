import type { JournalEntry } from '../../authority/journal.js';
import type { JournalState } from '../../domain/delivery/journal-states.js';
import { canonicalDigest, canonicalJson } from '../../domain/digest.js';
import { contentionBackoff } from '../../engine/rerun.js';
import { EffectFailedError, IdentityConflictError, OutcomeUnknownError } from '../../domain/errors.js';
import type { TransactionLeg, TransactionOutcome } from '../../ports/authority.js';
import { sameFence, type Fence } from '../../domain/fence.js';
import type { Ports } from '../../ports/index.js';
import { CustodyFencedError } from './errors.js';
import type { DeliveryFacts } from './facts.js';
import { deliveryKeys, journalOf, type InvocationRef } from './keys.js';
import {
  loadCustody,
  read,
  readInvocation,
  readInvocationAndCustody,
  type CustodyRecord,
  type InvocationRecord,
} from './records.js';

/**
 * The journaled write: one transaction per journal record, and the custody fence legs.
 *
 * Every write to an invocation is ONE TransactWriteItems: the invocation update (expected
 * version; it carries `journalSeq`, so it is the journal head), the custody leg (a fenced
 * ConditionCheck — the zombie guard — or the fenced release/takeover), the journal record
 * seq n+1 (must be absent) and the transition-id claim (must be absent), plus any leg the
 * step needs (the checkpoint). State, journal and custody can therefore never disagree:
 * there is no window in which the state moved but the journal did not, or custody was
 * released while the journal still retains it. The records are readable with the
 */

/** Throws Delivery.Fenced unless `fence` is the current custody of `ref`'s target, held by `ref`'s invocation. */
export function requireFence(
  ref: InvocationRef,
  custody: CustodyRecord | undefined,
  fence: Fence,
): asserts custody is CustodyRecord & { fence: Fence } {
  if (
    !custody ||
    custody.state !== 'HELD' ||
    custody.invocationId !== ref.invocationId ||
    fence.owner !== ref.invocationId ||
    !sameFence(custody.fence, fence)
  ) {
    throw new CustodyFencedError(ref, fence);
  }
}

/** The zombie guard: the transaction applies only while this exact fence holds custody. */
export function custodyGuardLeg(custody: CustodyRecord & { fence: Fence }): TransactionLeg {
  return {
    kind: 'check',
    key: deliveryKeys.custody(custody.targetId),
    expect: { version: custody.version, fence: custody.fence },
  };
}

/** Fenced release to the RELEASED marker; the epoch stays so the next acquire increments it. */
export function custodyReleaseLeg(custody: CustodyRecord & { fence: Fence }, at: string): TransactionLeg {
  return {
    kind: 'update',
    key: deliveryKeys.custody(custody.targetId),
    expect: { version: custody.version, fence: custody.fence },
    set: { state: 'RELEASED', fence: undefined, releasedAt: at },
  };
}

export interface JournaledPlan {
  /** Invocation attributes to change (the journal bookkeeping is added). */
  set: { state?: JournalState; facts?: DeliveryFacts; custodyEpoch?: number };
  /** The custody leg: a fenced check, a fenced release or a fenced takeover. */
  custody: TransactionLeg;
  /** Further legs (e.g. the checkpoint CAS). */
  legs?: TransactionLeg[];
  /** Extra journal data (e.g. `by: { session, epoch }`). */
  journal: Record<string, unknown>;
}

export interface JournaledWrite {
  cutPoint: string;
  ref: InvocationRef;
  transitionId: string;
  /** Journal entry type: begin | transition | facts | custody | checkpoint. */
  type: string;
  /** What the write means; replaying a transition id must mean the same (`delivery.transition_id_reused`). */
  op: Record<string, unknown>;
  /**
   * What the caller already read (the step's record, its custody check): the first round
   * plans against it and submits without reading anything; only a CONFLICT or an UNKNOWN
   * leads to the exact reloads of the next round.
   */
  known?: Known;
  /** Decides the write from what is current, or throws a domain error (nothing written). */
  plan(current: {
    invocation: InvocationRecord;
    custody: CustodyRecord | undefined;
    at: string;
  }): Promise<JournaledPlan> | JournaledPlan;
}

export interface Known {
  invocation: InvocationRecord;
  custody?: CustodyRecord;
}

export interface JournaledResult {
  invocation: InvocationRecord;
  entry: JournalEntry;
  /** True when the transition id was already journaled (a retry after a lost response or crash). */
  alreadyApplied: boolean;
}

const MAX_ROUNDS = 6;
/** The journal's own legs of every write (invocation, custody, record, claim); the plan's further legs follow. */
const JOURNAL_LEGS = 4;

export function opDigestOf(type: string, op: Record<string, unknown>): string {
  return canonicalDigest({ kind: 'cutpoint.delivery.journal-op', type, op });
}

/** The entry a transition id was journaled as, if it was — and only if it is the same operation. */
export async function findJournaled(
  ports: Ports,
  invocationId: string,
  transitionId: string,
  opDigest: string,
): Promise<JournalEntry | undefined> {
  const entry = await read(() => journalOf(ports.authority, invocationId).find(transitionId));
  if (entry && entry.data.opDigest !== opDigest) {
    throw new IdentityConflictError(
      'delivery.transition_id_reused',
      `transition id ${transitionId} is already journaled for a different operation`,
    );
  }
  return entry;
}

/**
 * A concurrent transaction on one of the items (DynamoDB cancels with TransactionConflict,
 * or refuses with TransactionInProgress): nothing applied, and the next round re-reads.
 */
export function isContention(error: unknown): boolean {
  if (!(error instanceof EffectFailedError)) return false;
  const name = (error.cause as { name?: unknown } | undefined)?.name;
  return name === 'TransactionCanceledException' || name === 'TransactionInProgressException';
}

/**
 * One round's submit of a fenced transaction (journaledWrite here, a part's receipt batch
 * in parts/part-store.ts): contention and a CONFLICT back off before they are returned
 * (the caller reloads exactly and plans again), UNKNOWN is returned for exact resolution.
 * Contention comes back as a CONFLICT without conflicting legs.
 */
export async function submitRound(
  ports: Ports,
  cutPoint: string,
  legs: TransactionLeg[],
  round: number,
): Promise<TransactionOutcome> {
  try {
    const outcome = await ports.authority.transact(cutPoint, legs);
    if (outcome.status === 'CONFLICT') await contentionBackoff(round);
    return outcome;
  } catch (error) {
    if (!isContention(error)) throw error;
    await contentionBackoff(round);
    return { status: 'CONFLICT', conflicts: [] };
  }
}

/**
 * Runs one journaled write to exactly-once: each round first reloads the exact claim of
 * the transition id (our write landed — now, after a lost response, or before a crash —
 * and it is the same operation), then plans against the current invocation and custody
 * and submits ONE transaction. A first round with `known` skips those reads: the
 * transaction's own conditions (version, fence, absent claim) refuse a stale plan. UNKNOWN and CONFLICT both lead to the next round's exact
 * reload; the conditions (invocation version, custody fence, absent record and claim)
 * make a resubmission safe. Never "a similar state exists": only the claim counts.
 */
export async function journaledWrite(ports: Ports, write: JournaledWrite): Promise<JournaledResult> {
  const { ref, transitionId } = write;
  const opDigest = opDigestOf(write.type, write.op);
  let unknownReason: string | undefined;
  let refusedLegs: string | undefined;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const known = round === 0 ? write.known : undefined;
    if (!known) {
      const done = await findJournaled(ports, ref.invocationId, transitionId, opDigest);
      if (done) return { invocation: await readInvocation(ports, ref), entry: done, alreadyApplied: true };
    }
    const { invocation, custody } = known
      ? { invocation: known.invocation, custody: known.custody ?? (await loadCustody(ports, ref.targetId)) }
      : await readInvocationAndCustody(ports, ref);
    const at = ports.clock.now().toISOString();
    let plan: JournaledPlan;
    try {
      plan = await write.plan({ invocation, custody, at });
    } catch (error) {
      // A refusal planned on what the caller carried is decided again on what is current.
      if (known) continue;
      throw error;
    }
    // The caller's own legs were refused last round and are planned again unchanged: their
    // expected versions cannot have come true, so resubmitting cannot apply (a stale capsule
    // leg of a zombie observer, say). Stop now rather than after every round.
    if (refusedLegs !== undefined && canonicalJson(plan.legs ?? []) === refusedLegs) break;
    const seq = invocation.journalSeq + 1;
    const entry: JournalEntry = {
      seq,
      transitionId,
      type: write.type,
      at,
      data: { ...plan.journal, op: write.op, opDigest },
    };
    const set = { ...plan.set, journalSeq: seq, lastTransitionId: transitionId, updatedAt: at };
    const legs: TransactionLeg[] = [
      {
        kind: 'update',
        key: deliveryKeys.invocation(ref.targetId, ref.invocationId),
        expect: { version: invocation.version },
        set,
      },
      plan.custody,
      { kind: 'put', item: { ...deliveryKeys.journalRecord(ref.invocationId, seq), ...entry }, expect: 'absent' },
      { kind: 'put', item: { ...deliveryKeys.journalClaim(ref.invocationId, transitionId), seq }, expect: 'absent' },
      ...(plan.legs ?? []),
    ];
    const outcome = await submitRound(ports, write.cutPoint, legs, round);
    if (outcome.status === 'APPLIED') {
      return { invocation: { ...invocation, ...set, version: invocation.version + 1 }, entry, alreadyApplied: false };
    }
    if (outcome.status === 'UNKNOWN') unknownReason = outcome.reason;
    const ownLegsOnly =
      outcome.status === 'CONFLICT' &&
      outcome.conflicts.length > 0 &&
      outcome.conflicts.every((c) => c.leg >= JOURNAL_LEGS);
    refusedLegs = ownLegsOnly ? canonicalJson(plan.legs ?? []) : undefined;
  }
  const done = await findJournaled(ports, ref.invocationId, transitionId, opDigest);
  if (done) return { invocation: await readInvocation(ports, ref), entry: done, alreadyApplied: true };
  if (unknownReason !== undefined) {
    throw new OutcomeUnknownError(
      write.cutPoint,
      `${write.cutPoint}: ${transitionId} of invocation ${ref.invocationId} is still unknown (${unknownReason})`,
    );
  }
  throw new EffectFailedError(
    write.cutPoint,
    `${write.cutPoint}: ${transitionId} of invocation ${ref.invocationId} kept conflicting and was not applied`,
  );
}
