import { assertAttemptInWindow, attemptWindowOf } from '../../domain/attempt-time.js';
import { sha256Hex } from '../../domain/digest.js';
import { IdentityConflictError } from '../../domain/errors.js';
import { encodeBatch } from '../../domain/record-batch.js';
import { walKeyOf, walMetadataOf, type LaneHead, type LaneRef } from '../../domain/stream.js';
import { sameFence } from '../../domain/fence.js';
import {
  AttemptAbortedError,
  AttemptIdentityConflictError,
  FencedError,
  LaneSuspendedError,
} from '../../domain/stream-errors.js';
import { putExact } from '../../objects/exact-object.js';
import type { Ports } from '../../ports/index.js';
import { decodeRecords, validateAttemptRef, type AttemptRef, type WalRef } from '../append-input.js';
import { STREAM_CUT_POINTS } from '../cut-points.js';
import { assertSessionIssued, loadHead } from '../lane-store.js';
import { collectedAttempt, collectedWalOf, spentMarker, walsOf } from './attempt-evidence.js';
import { claimTurn, suspendedAgainst } from './claim-turn.js';
import { writerAgainst } from './writer-slot.js';

/** What the writer already knows from its last CAS (or load): no reload needed. */
export interface KnownHead {
  version: number;
  /** The offset this batch is bound to (the committed end, or the previous batch's end when pipelined). */
  start: number;
  /** The lane's attempt window (src/domain/attempt-time.ts), fixed at create. */
  attemptWindowSeconds: number;
}

export interface WalWritten extends AttemptRef {
  wal: WalRef;
  /**
   * The head version the CAS can be conditioned on and the lane's attempt window (the CAS
   * step checks the attempt against it without a read); null when the next step must load them.
   */
  expected: { version: number; attemptWindowSeconds: number } | null;
}

/**
 * Append step 1: the batch's WAL bytes, one immutable object keyed by the attempt AND the
 * batch's SHA-256 (`walKeyOf`), so other bytes under the same attempt id can never replace
 * a durable WAL object. Its metadata binds the batch to the range it may commit at — the
 * owner session's epoch and `start`, the committed end when it was written — so the range
 * is fixed before any authority write and a retry reuses it (never guesses a new offset).
 *
 * The lean path (`known`: a LaneWriter that carries its head, with an attempt id it minted
 * itself, so nothing can exist under it yet): exactly one PUT, no read.
 * Either way a time-marked attempt id outside the lane's attempt window is refused first
 * (Stream.AttemptExpired, Stream.AttemptTimeFuture: src/domain/attempt-time.ts), nothing
 * written: past the window its evidence may have been retired.
 * Otherwise (the flow's Lambda, or a caller's attempt id) the head is loaded and the
 * attempt's evidence is checked before any WAL I/O:
 * - a session the lane never issued is refused (Stream.UnknownSession), nothing written;
 * - the same attempt id with another batch (another WAL object under its prefix, or a
 *   spent marker naming other bytes) is Stream.AttemptIdentityConflict, nothing written;
 * - the same batch already written: its binding is reused as it is (the next step finds
 *   out whether it committed) — also when GC has since collected the WAL object of the
 *   committed attempt (its `collected#` record keeps the binding: KNOWN_COMMITTED again);
 * - spent, suspended (by an attempt, or by another LaneWriter's slot) or fenced: refusals
 *   the flow turns into KNOWN_NOT_COMMITTED.
 * A lost or uncertain PUT is resolved by reading the exact key back (metadata and SHA-256).
 * Then, off the lean path, the attempt suspends the lane for itself (claim-turn.ts) and the
 * head CAS is conditioned on the version that leaves: its outcome can never be unknown on
 * a lane that is not suspended by it.
 */
export async function writeWal(input: unknown, ports: Ports, known?: KnownHead): Promise<WalWritten> {
  const ref = validateAttemptRef(input);
  const records = decodeRecords(input);
  const bytes = encodeBatch(records);
  const sha256 = sha256Hex(bytes);
  const walKey = walKeyOf(ref, ref.attemptId, sha256);
  const batch = { walKey, walSha256: sha256, walSize: bytes.byteLength, recordCount: records.length };
  let binding: KnownHead;
  let head: LaneHead | undefined;
  if (known) {
    assertAttemptInWindow(ref.attemptId, known.attemptWindowSeconds, ports.clock.now());
    binding = known;
  } else {
    head = await loadHead(ports, ref);
    assertAttemptInWindow(ref.attemptId, attemptWindowOf(head), ports.clock.now());
    await assertSessionIssued(ports, ref, head, ref.session);
    const [marker, wals] = await Promise.all([
      spentMarker(ports, ref, ref.attemptId),
      walsOf(ports, ref, ref.attemptId),
    ]);
    // GC writes the collected record before it deletes the WAL object: read after the WAL
    // objects, it names any the listing missed because GC deleted it meanwhile. Read beside
    // them, it could miss both, and the committed batch would be appended again.
    const collected = collectedWalOf(await collectedAttempt(ports, ref, ref.attemptId));
    const others = [...wals, ...(collected ? [collected] : [])];
    if (
      others.some((w) => w.walSha256 !== sha256) ||
      (marker && marker.walSha256 !== '' && marker.walSha256 !== sha256)
    ) {
      throw new AttemptIdentityConflictError(ref.attemptId, 'already has a WAL object of another batch');
    }
    // A committed attempt whose WAL object GC collected: its collected record keeps the binding.
    const same = others.find((w) => w.recordCount === records.length);
    // The same batch is already durable: its binding is fixed, the head CAS step decides.
    if (same) return { ...ref, wal: same, expected: null };
    if (marker) throw new AttemptAbortedError(ref.attemptId, marker.reason);
    const holder = suspendedAgainst(head, ref.attemptId);
    if (holder) throw new LaneSuspendedError(ref, holder);
    // A LaneWriter's slot (writer-slot.ts): refused before any WAL I/O.
    const writer = writerAgainst(head, ref.attemptId);
    if (writer) throw LaneSuspendedError.byWriter(ref, writer);
    if (!sameFence(head.fence, ref.session)) throw new FencedError(ref, 'the session does not own the lane');
    binding = { version: head.version, start: head.committedEnd, attemptWindowSeconds: attemptWindowOf(head) };
  }
  const wal: WalRef = { ...batch, start: binding.start, fenceEpoch: ref.session.epoch };
  try {
    await putExact(
      ports.objects,
      STREAM_CUT_POINTS.wal,
      walKey,
      bytes,
      walMetadataOf(ref as LaneRef, ref.attemptId, sha256, records.length, wal),
    );
  } catch (error) {
    // Another execution of this attempt (a duplicate start, a zombie) wrote the same batch
    // first, bound to another start: the key is create-only, so that binding is the batch's
    // for good. Adopt it, as the evidence check above does; the head CAS step decides.
    const first =
      error instanceof IdentityConflictError
        ? (await walsOf(ports, ref, ref.attemptId)).find((w) => w.walKey === walKey && w.recordCount === records.length)
        : undefined;
    if (!first) throw error;
    return { ...ref, wal: first, expected: null };
  }
  const window = binding.attemptWindowSeconds;
  if (!head) return { ...ref, wal, expected: { version: binding.version, attemptWindowSeconds: window } };
  // The attempt suspends the lane for itself before its head CAS is sent (claim-turn.ts).
  const version = await claimTurn(ports, ref, head);
  return { ...ref, wal, expected: version === undefined ? null : { version, attemptWindowSeconds: window } };
}
