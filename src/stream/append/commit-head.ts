import { assertAttemptInWindow, attemptWindowOf } from '../../domain/attempt-time.js';
import { EffectFailedError, OutcomeUnknownError } from '../../domain/errors.js';
import { laneKeys, type AppendOutcome, type CommitRecord } from '../../domain/stream.js';
import { sameFence } from '../../domain/fence.js';
import {
  AttemptAbortedError,
  AttemptIdentityConflictError,
  FencedError,
  LaneSuspendedError,
} from '../../domain/stream-errors.js';
import type { Ports } from '../../ports/index.js';
import {
  carriedVersion,
  carriedWindow,
  validateAttemptRef,
  validateWalRef,
  type AttemptRef,
  type WalRef,
} from '../append-input.js';
import { STREAM_CUT_POINTS } from '../cut-points.js';
import { commitContaining, loadHead } from '../lane-store.js';
import { knownCommitted } from '../outcomes.js';
import { commitAtEnd, namesAttempt, spentMarker } from './attempt-evidence.js';
import { claimTurn, suspendedAgainst } from './claim-turn.js';
import { writerAgainst } from './writer-slot.js';

const MAX_ROUNDS = 8;
/** Unknown outcomes re-issued before the flow suspends the lane. */
const MAX_UNKNOWN = 3;

/** KNOWN_COMMITTED and the head version the CAS left (undefined when it was not this call's CAS). */
export type HeadCommitted = AppendOutcome & { headVersion?: number };

/**
 * Append step 2, the head CAS: ONE transaction of two item writes —
 * - the head: committedEnd start → end, conditioned on the head version the writer carries
 *   and on its fence (owner, session, epoch). The version also covers "not suspended, or
 *   suspended by this attempt itself" and "committedEnd = start" (suspending, taking over,
 *   trimming and appending all bump it); the attempt's own suspension (claim-turn.ts, taken
 *   before the CAS off the lean path) is lifted by the same write;
 * - `commit#<end>`, put-if-absent, naming the attempt, its WAL object and SHA-256: the
 *   commit evidence, which reads also use as the index.
 * No GetItem on the happy path. First, before anything is written, a time-marked attempt
 * outside the lane's attempt window is refused (Stream.AttemptExpired, Stream.AttemptTimeFuture:
 * src/domain/attempt-time.ts; the window carried with the version, else read from the head).
 * Only an attempt whose window closed since its WAL PUT gets here (a re-run is refused at
 * WriteWal): a claim it took before is lifted by `stream resolve`. Outcomes:
 * - APPLIED: KNOWN_COMMITTED (the new head version is carried to the next batch).
 * - UNKNOWN: `commit#<end>` is read: naming this attempt → KNOWN_COMMITTED; otherwise the
 *   same CAS (same version) is re-issued — two identical CASes apply at most once, and a
 *   moved version proves the lost one never can. After MAX_UNKNOWN: Cutpoint.OutcomeUnknown
 *   (MAY_HAVE_COMMITTED: the lane stays suspended by the attempt — already, off the lean
 *   path — until the original attempt is resolved).
 * - CONFLICT: reload (head first, then the spent marker) and decide (`decide`).
 */
export async function commitHead(input: unknown, ports: Ports): Promise<HeadCommitted> {
  const ref = validateAttemptRef(input);
  const wal = validateWalRef(input);
  const cut = STREAM_CUT_POINTS.headCas;
  const end = wal.start + wal.recordCount;
  const window = carriedWindow(input) ?? attemptWindowOf(await loadHead(ports, ref));
  assertAttemptInWindow(ref.attemptId, window, ports.clock.now());
  let version = carriedVersion(input);
  let unknown = 0;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    if (version === undefined) {
      const decided = await decide(ports, ref, wal);
      if (decided === undefined) continue; // the head moved before the claim: decide again
      if (typeof decided !== 'number') return decided;
      version = decided;
    }
    const commit: CommitRecord = {
      stream: ref.stream,
      partition: ref.partition,
      attemptId: ref.attemptId,
      start: wal.start,
      end,
      walKey: wal.walKey,
      walSha256: wal.walSha256,
      walSize: wal.walSize,
      committedAt: ports.clock.now().toISOString(),
    };
    const outcome = await ports.authority.transact(cut, [
      // Lifts the attempt's own suspension (claim-turn.ts): the version covers it being this attempt's.
      {
        kind: 'update',
        key: laneKeys.head(ref),
        expect: { version, fence: ref.session },
        set: {
          committedEnd: end,
          lastAttemptId: ref.attemptId,
          suspendedBy: undefined,
          suspendedAt: undefined,
          turnClaimed: undefined,
        },
      },
      { kind: 'put', item: { ...laneKeys.commit(ref, end), ...commit }, expect: 'absent' },
    ]);
    if (outcome.status === 'APPLIED')
      return {
        ...knownCommitted({ ...ref, recordCount: wal.recordCount, start: wal.start, end }),
        headVersion: version + 1,
      };
    if (outcome.status === 'UNKNOWN') {
      if (namesAttempt(await commitAtEnd(ports, ref, wal), ref.attemptId, wal))
        return knownCommitted({ ...ref, recordCount: wal.recordCount, start: wal.start, end });
      if (++unknown >= MAX_UNKNOWN) {
        throw new OutcomeUnknownError(
          cut,
          `${cut}: head CAS for attempt ${ref.attemptId} on ${ref.stream}/${ref.partition} is unknown`,
        );
      }
      continue; // re-issue the same CAS at the same version
    }
    version = undefined; // CONFLICT: reload and decide again
  }
  // Every round ended CONFLICT, which proves no CAS applied (the head kept moving): a
  // definite failure, retried by the flow — never a suspension.
  throw new EffectFailedError(cut, `${cut}: the head kept moving; attempt ${ref.attemptId} was not applied`);
}

/**
 * Off the happy path: what the attempt's exact evidence says. Returns the head version to
 * CAS on — the lane suspended by this attempt first (claim-turn.ts) — or KNOWN_COMMITTED,
 * or throws the refusal the flow turns into an interpretation; undefined when the head
 * moved before the claim. The head is read BEFORE the spent marker: a marker is written
 * together with a head version bump, so a head read after it sees the marker, and a CAS
 * prepared from a head read before it can no longer apply.
 */
async function decide(ports: Ports, ref: AttemptRef, wal: WalRef): Promise<number | HeadCommitted | undefined> {
  const end = wal.start + wal.recordCount;
  const head = await loadHead(ports, ref);
  const marker = await spentMarker(ports, ref, ref.attemptId);
  if (head.committedEnd >= end && namesAttempt(await commitAtEnd(ports, ref, wal), ref.attemptId, wal)) {
    return knownCommitted({ ...ref, recordCount: wal.recordCount, start: wal.start, end });
  }
  if (marker) throw new AttemptAbortedError(ref.attemptId, marker.reason);
  if (wal.fenceEpoch !== ref.session.epoch)
    throw new FencedError(ref, `attempt ${ref.attemptId} was started by an earlier owner session`);
  const holder = suspendedAgainst(head, ref.attemptId);
  if (holder) throw new LaneSuspendedError(ref, holder);
  const writer = writerAgainst(head, ref.attemptId);
  if (writer) throw LaneSuspendedError.byWriter(ref, writer);
  if (!sameFence(head.fence, ref.session)) throw new FencedError(ref, 'a newer owner session holds the lane');
  if (head.committedEnd > wal.start) {
    // The committed end passed the bound start and never goes back: never committable.
    const taken = await commitContaining(ports, ref, wal.start);
    if (taken?.attemptId === ref.attemptId)
      throw new AttemptIdentityConflictError(ref.attemptId, 'committed another batch');
    throw new AttemptAbortedError(ref.attemptId, `offset ${wal.start} was committed by another attempt`);
  }
  if (head.committedEnd < wal.start)
    throw new AttemptAbortedError(ref.attemptId, `the batch before offset ${wal.start} did not commit`);
  return claimTurn(ports, ref, head);
}
