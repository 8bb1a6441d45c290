/**
 * Begin's custody (docs/delivery.md, 'Delivery recovery: the five commands and the flows behind them'): an invocation starts with its sealed
 * authority, its record, its journal's first entry and custody of the target in ONE
 * transaction. The rest of custody — a recovery session's takeover, the check, the
 * release — is custody.ts, whose item layout and grant this shares.
 */
import { validateInvocationId, isManifestName } from '../domain/delivery/identifiers.js';
import { INITIAL_STATE } from '../domain/delivery/journal-states.js';
import { validateSealedAuthority, type SealedAuthority } from '../domain/delivery/sealed-authority.js';
import { EffectFailedError, IdentityConflictError, OutcomeUnknownError, ValidationError } from '../domain/errors.js';
import { contentionBackoff } from '../engine/rerun.js';
import type { TransactionLeg } from '../ports/authority.js';
import type { Fence } from '../domain/fence.js';
import type { Ports } from '../ports/index.js';
import { DELIVERY_CUT_POINTS } from './cut-points.js';
import { CustodyHeldError } from './journal/errors.js';
import { EMPTY_FACTS } from './journal/facts.js';
import { findJournaled, isContention, opDigestOf } from './journal/journaled-write.js';
import { deliveryKeys, validateSession, validateTargetId, type InvocationRef } from './journal/keys.js';
import { loadCustody, loadInvocation, type CustodyRecord } from './journal/records.js';
import { BEGIN_ID, type CustodyGrant } from './custody.js';

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
      // Held until its terminal transition deletes it (journal/keys.ts): the held custodies, listed without a scan.
      { kind: 'put', item: { ...deliveryKeys.held(invocationId), targetId, since: at }, expect: 'absent' },
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
