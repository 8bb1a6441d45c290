// Over ~300 lines since the formatter wrapped it at 120 columns (294 lines before), kept whole:
// one job: target custody (begin's acquisition with the sealed authority, a recovery session's
// acquisition, the check and the release), whose conditions share one item layout; splitting
// begin out is planned with the registry and seam work of issue 29.
import { validateInvocationId, isManifestName } from '../domain/delivery/identifiers.js';
import { holdsCustody, INITIAL_STATE, isTerminal, JournalUnavailableError } from '../domain/delivery/journal-states.js';
import { validateSealedAuthority, type SealedAuthority } from '../domain/delivery/sealed-authority.js';
import {
  CutpointError,
  EffectFailedError,
  IdentityConflictError,
  OutcomeUnknownError,
  ValidationError,
} from '../domain/errors.js';
import { contentionBackoff } from '../engine/rerun.js';
import type { TransactionLeg } from '../ports/authority.js';
import type { Fence } from '../domain/fence.js';
import type { Ports } from '../ports/index.js';
import { DELIVERY_CUT_POINTS } from './cut-points.js';
import { CustodyFencedError, CustodyHeldError } from './journal/errors.js';
import { EMPTY_FACTS } from './journal/facts.js';
import {
  findJournaled,
  isContention,
  journaledWrite,
  opDigestOf,
  requireFence,
  type JournaledResult,
} from './journal/journaled-write.js';
import {
  deliveryKeys,
  journalOf,
  validateCustodyFence,
  validateInvocationRef,
  validateSession,
  validateTargetId,
  type InvocationRef,
} from './journal/keys.js';
import {
  loadCustody,
  loadInvocation,
  readInvocation,
  type CustodyRecord,
  type InvocationRecord,
} from './journal/records.js';
import { transition, type TransitionRequest } from './journal/transition.js';

export { CustodyFencedError, CustodyHeldError, loadCustody, type CustodyRecord };

/**
 * Target custody (seed 004): one invocation at a time holds a target — its lock, its owned
 * stages and its work files — from before source row I/O until cleanup is proved. The
 * custody item carries a fence {owner = invocation id, session, epoch}; every journal
 * write of the holder names that fence in the same transaction, so a zombie step from an
 * old epoch can neither publish (the PUBLISHED transition), advance the checkpoint, nor
 * drop stages (the RETIRED transition) — its transaction fails the custody condition and
 * writes nothing. No correctness depends on a lease expiring: custody is only ever
 * released by the holder's own fenced terminal transition, and taken over only by a new
 * session of the same invocation (recovery), which raises the epoch.
 */

export interface BeginRequest {
  invocationId: string;
  route: string;
  targetId: string;
  sealed: SealedAuthority;
  /**
   * The caller's session: opaque, unique per process or flow execution, and reused by its
   * own retries (a retry with the same session after a lost response gets the same grant).
   */
  session: string;
  /**
   * What the caller read just before: no pointer for this invocation, and the target's
   * custody item. The first round submits on it without reading; the transaction's own
   * conditions (pointer absent, custody version) refuse a stale read.
   */
  known?: { custody: CustodyRecord | undefined };
  /**
   * Further legs of the begin transaction, decided on the custody item this round read
   * (absent or RELEASED) and the epoch the grant takes, e.g. a ClickHouse successor's
   * boundary legs (src/publication/successor.ts). A refusal it throws writes nothing.
   */
  legs?: (custody: CustodyRecord | undefined, context: { at: string; epoch: number }) => Promise<TransactionLeg[]>;
}

export interface CustodyGrant {
  fence: Fence;
  invocation: InvocationRecord;
  /** The custody record this grant wrote (absent when found already applied: read it). */
  custody?: CustodyRecord & { fence: Fence };
  /** True when this session already held custody (a retry): nothing was written now. */
  alreadyApplied: boolean;
}

const BEGIN_ID = 'sys:begin';
const MAX_ROUNDS = 6;

/**
 * Starts an invocation: the sealed recovery authority, the invocation record in
 * EMPTY_STAGING, its pointer, journal record 1, and custody of the target — ONE
 * transaction at `delivery.custody.acquire`. Custody is taken by CAS: absent → epoch 1,
 * RELEASED → last epoch + 1; held by another invocation → Delivery.CustodyHeld naming the
 * holder, and nothing is written. Because record and custody move together, custody can
 * never be held by an invocation that inspect-all cannot see, nor a journal claim custody
 * it never got.
 *
 * A lost response is resolved by exact reload: the journal's begin record names this
 * session and this seal. Another session's begin of the same id is
 * `delivery.invocation_exists`.
 */
export async function beginInvocation(ports: Ports, request: BeginRequest): Promise<CustodyGrant> {
  const invocationId = validateInvocationId(request.invocationId);
  const targetId = validateTargetId(request.targetId);
  const session = validateSession(request.session);
  if (!isManifestName(request.route))
    throw new ValidationError('delivery.route_invalid', 'route name must be [a-z][a-z0-9_-]{0,63}');
  const route = request.route;
  let sealed: SealedAuthority;
  try {
    sealed = validateSealedAuthority(request.sealed);
  } catch {
    throw new ValidationError(
      'delivery.seal_invalid',
      'the sealed authority is malformed or does not match its seal digest',
    );
  }
  if (sealed.invocationId !== invocationId)
    throw new ValidationError('delivery.seal_invalid', 'the sealed authority belongs to another invocation');

  const ref: InvocationRef = { targetId, invocationId };
  const cut = DELIVERY_CUT_POINTS.custodyAcquire;
  const op = { route, targetId, sealDigest: sealed.sealDigest };
  const opDigest = opDigestOf('begin', op);
  let unknownReason: string | undefined;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const known = round === 0 ? request.known : undefined;
    if (!known) {
      const ours = await beganBy(ports, ref, session, opDigest);
      if (ours) return ours;
    }
    const custody = known ? known.custody : await loadCustody(ports, targetId);
    if (custody?.state === 'HELD') {
      // Our own earlier transaction may be landing right now; the next round's reload decides.
      if (custody.invocationId === invocationId) {
        await contentionBackoff(round);
        continue;
      }
      throw new CustodyHeldError(targetId, custody.invocationId);
    }
    const at = ports.clock.now().toISOString();
    const epoch = (custody?.epoch ?? 0) + 1;
    const fence: Fence = { owner: invocationId, session, epoch };
    let extra: TransactionLeg[];
    try {
      extra = request.legs ? await request.legs(custody, { at, epoch }) : [];
    } catch (error) {
      // The caller's legs (a successor's boundary) were planned on this custody: a refusal
      // planned on one that moved meanwhile (a racing successor took the slot and closed the
      // previous window) is decided again on the current one.
      if (known || (await loadCustody(ports, targetId))?.version !== custody?.version) continue;
      throw error;
    }
    const record = {
      invocationId,
      route,
      targetId,
      state: INITIAL_STATE,
      sealed,
      facts: { ...EMPTY_FACTS, chunks: [], loads: [] },
      custodyEpoch: epoch,
      journalSeq: 1,
      lastTransitionId: BEGIN_ID,
      createdAt: at,
      updatedAt: at,
    };
    const entry = { seq: 1, transitionId: BEGIN_ID, type: 'begin', at, data: { op, opDigest, by: { session, epoch } } };
    const legs: TransactionLeg[] = [
      {
        kind: 'put',
        item: {
          ...deliveryKeys.custody(targetId),
          targetId,
          state: 'HELD',
          epoch,
          fence,
          invocationId,
          acquiredAt: at,
        },
        expect: custody ? { version: custody.version } : 'absent',
      },
      { kind: 'put', item: { ...deliveryKeys.invocation(targetId, invocationId), ...record }, expect: 'absent' },
      { kind: 'put', item: { ...deliveryKeys.pointer(invocationId), targetId, route }, expect: 'absent' },
      { kind: 'put', item: { ...deliveryKeys.journalRecord(invocationId, 1), ...entry }, expect: 'absent' },
      { kind: 'put', item: { ...deliveryKeys.journalClaim(invocationId, BEGIN_ID), seq: 1 }, expect: 'absent' },
      ...extra,
    ];
    let outcome;
    try {
      outcome = await ports.authority.transact(cut, legs);
    } catch (error) {
      if (!isContention(error)) throw error;
      await contentionBackoff(round);
      continue;
    }
    if (outcome.status === 'APPLIED') {
      const held = {
        targetId,
        state: 'HELD' as const,
        epoch,
        fence,
        invocationId,
        acquiredAt: at,
        version: custody ? custody.version + 1 : 1,
      };
      return { fence, invocation: { ...record, version: 1 }, custody: held, alreadyApplied: false };
    }
    if (outcome.status === 'UNKNOWN') unknownReason = outcome.reason;
    else await contentionBackoff(round);
  }
  const ours = await beganBy(ports, ref, session, opDigest);
  if (ours) return ours;
  if (unknownReason !== undefined)
    throw new OutcomeUnknownError(
      cut,
      `${cut}: begin of invocation ${invocationId} is still unknown (${unknownReason})`,
    );
  throw new EffectFailedError(cut, `${cut}: begin of invocation ${invocationId} kept conflicting and was not applied`);
}

async function findJournaledEntry(ports: Ports, invocationId: string, transitionId: string) {
  return journalOf(ports.authority, invocationId).find(transitionId);
}

/** The exact reload for begin: the pointer, then the journal's begin record naming our session and seal. */
async function beganBy(
  ports: Ports,
  ref: InvocationRef,
  session: string,
  opDigest: string,
): Promise<CustodyGrant | undefined> {
  const pointer = await ports.authority.get(deliveryKeys.pointer(ref.invocationId));
  if (!pointer) return undefined;
  let entry;
  try {
    entry = await findJournaled(ports, ref.invocationId, BEGIN_ID, opDigest);
  } catch (error) {
    if (error instanceof IdentityConflictError) throw existsError();
    throw error;
  }
  const by = entry?.data.by as { session?: unknown; epoch?: unknown } | undefined;
  if (!entry || by?.session !== session || typeof by.epoch !== 'number') throw existsError();
  const invocation = await loadInvocation(ports, ref.invocationId);
  if (invocation.targetId !== ref.targetId) throw existsError();
  return { fence: { owner: ref.invocationId, session, epoch: by.epoch }, invocation, alreadyApplied: true };
}

function existsError(): IdentityConflictError {
  return new IdentityConflictError(
    'delivery.invocation_exists',
    'this invocation id has already begun under another session or seal; start a new invocation',
  );
}

/** Custody of a terminal invocation is released for good; it cannot be taken again. */
export class CustodyNotRetainedError extends CutpointError {
  constructor(invocationId: string) {
    super(
      'Delivery.CustodyNotRetained',
      'delivery.custody_not_retained',
      `invocation ${invocationId} is terminal and no longer retains custody`,
    );
  }
}

/**
 * A new session takes custody of an invocation that retains it (a recovery action: the
 * seed's "acquires the normal lease and target custody"): the epoch goes up by one in a
 * fenced CAS on the custody item, journaled once per session (`sys:custody:<session>`),
 * so every older session of this invocation — a zombie still running — is fenced from
 * then on. A session is granted custody at most once: asking again with the same session
 * returns that grant (alreadyApplied), fenced if a newer session took over since. Refused without a write when the invocation
 * is terminal (Delivery.CustodyNotRetained) or another invocation holds the target
 * (Delivery.CustodyHeld); a custody item that disagrees with a retaining journal is an
 * inconsistent journal. `condition`, planned each round, adds legs the caller's own state
 * must still satisfy in the same transaction, or throws its refusal (the operator's observe:
 * the capsule still without a reader guard — a takeover would fence out the guard's owner,
 * who then could never release it). `known`: the record and custody the caller just read
 * (a recovery action's checked load): the takeover is planned on them without reading
 * again, its transaction conditioned on both versions. The grant carries the custody it
 * wrote, so the session's next write reads nothing either.
 */
export async function acquireCustody(
  ports: Ports,
  ref: InvocationRef,
  session: string,
  condition?: () => Promise<TransactionLeg[]>,
  known?: { invocation: InvocationRecord; custody: CustodyRecord | undefined },
): Promise<CustodyGrant> {
  const target = validateInvocationRef(ref);
  const ourSession = validateSession(session);
  const current = known ? known.custody : await loadCustody(ports, target.targetId);
  if (
    current?.state === 'HELD' &&
    current.invocationId === target.invocationId &&
    current.fence?.session === ourSession
  ) {
    return { fence: current.fence, invocation: await readInvocation(ports, target), alreadyApplied: true };
  }
  // A session is granted custody at most once: the session that began the invocation gets
  // its begin grant back (fenced, if a takeover followed), never a fresh epoch.
  const begun = await findJournaledEntry(ports, target.invocationId, BEGIN_ID);
  const by = begun?.data.by as { session?: unknown; epoch?: unknown } | undefined;
  if (by?.session === ourSession && typeof by.epoch === 'number') {
    return {
      fence: { owner: target.invocationId, session: ourSession, epoch: by.epoch },
      invocation: await readInvocation(ports, target),
      alreadyApplied: true,
    };
  }
  let held: (CustodyRecord & { fence: Fence }) | undefined;
  const result = await journaledWrite(ports, {
    cutPoint: DELIVERY_CUT_POINTS.custodyAcquire,
    ref: target,
    transitionId: `sys:custody:${ourSession}`,
    type: 'custody',
    op: { session: ourSession },
    ...(known ? { known } : {}),
    plan: async ({ invocation, custody, at }) => {
      if (!holdsCustody(invocation.state)) throw new CustodyNotRetainedError(target.invocationId);
      if (custody?.state === 'HELD' && custody.invocationId !== target.invocationId)
        throw new CustodyHeldError(target.targetId, custody.invocationId);
      if (!custody || custody.state !== 'HELD' || !custody.fence) {
        throw new JournalUnavailableError(
          'delivery.recovery_journal_inconsistent',
          'the journal retains custody but the target custody record is not held by it',
        );
      }
      const epoch = custody.epoch + 1;
      const fence: Fence = { owner: target.invocationId, session: ourSession, epoch };
      // The custody item as this round's update leaves it, should it apply.
      held = { ...custody, fence, epoch, acquiredAt: at, version: custody.version + 1 };
      return {
        set: { custodyEpoch: epoch },
        custody: {
          kind: 'update',
          key: deliveryKeys.custody(target.targetId),
          expect: { version: custody.version, fence: custody.fence },
          set: { fence, epoch, acquiredAt: at },
        },
        journal: { by: { session: ourSession, epoch }, previousEpoch: custody.epoch },
        ...(condition ? { legs: await condition() } : {}),
      };
    },
  });
  const epoch = (result.entry.data.by as { epoch: number }).epoch;
  return {
    fence: { owner: target.invocationId, session: ourSession, epoch },
    invocation: result.invocation,
    ...(!result.alreadyApplied && held ? { custody: held } : {}),
    alreadyApplied: result.alreadyApplied,
  };
}

/**
 * For a step about to act outside the authority (a target write, an S3 PUT): throws
 * Delivery.Fenced unless `fence` holds custody of the target now. This is a check, not a
 * guard — a takeover can follow it — which is why every authority write also carries the
 * fence in its own transaction and the target adapters recheck exact object identity.
 */
export async function assertCustody(
  ports: Ports,
  targetId: string,
  fence: Fence,
): Promise<CustodyRecord & { fence: Fence }> {
  const id = validateTargetId(targetId);
  const f = validateCustodyFence(fence);
  const custody = await loadCustody(ports, id);
  const ref = { targetId: id, invocationId: f.owner };
  requireFence(ref, custody, f);
  return custody;
}

/**
 * Releases custody: the holder's transition to a terminal state (SUCCEEDED →
 * CUSTODY_RELEASED once cleanup is proved; PARTIAL_PROVED / EMPTY_STAGING /
 * REEXTRACT_REQUIRED → RETIRED once the owned stages are proved gone), journaled and
 * released in one fenced transaction at `delivery.custody.release`. The custody item
 * keeps its epoch as a RELEASED marker, so the next acquire takes epoch + 1. There is no
 * release without a terminal transition: custody released while the journal still
 * retains it would let a new invocation start over an unresolved one.
 */
export async function releaseCustody(
  ports: Ports,
  ref: InvocationRef,
  request: TransitionRequest,
): Promise<JournaledResult> {
  if (!isTerminal(request.to)) {
    throw new ValidationError(
      'delivery.release_not_terminal',
      `custody is released only by a transition to RETIRED or CUSTODY_RELEASED, not ${String(request.to)}`,
    );
  }
  return transition(ports, ref, request);
}
