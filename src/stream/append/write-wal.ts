import { sha256Hex } from '../../domain/digest.js';
import { encodeBatch } from '../../domain/record-batch.js';
import { sameFence, walKeyOf, walMetadataOf, walPrefixOf, type AppendIntent } from '../../domain/stream.js';
import { AttemptAbortedError, AttemptIdentityConflictError, FencedError, LaneSuspendedError } from '../../domain/stream-errors.js';
import { putExact } from '../../objects/exact-object.js';
import type { Ports } from '../../ports/index.js';
import { decodeRecords, validateAttemptRef, type AttemptRef, type WalRef } from '../append-input.js';
import { STREAM_CUT_POINTS } from '../cut-points.js';
import { assertSessionIssued, loadHead, loadIntent } from '../lane-store.js';

/**
 * Append step 1: the batch's WAL bytes, one object under the attempt's exact identity —
 * the attempt id AND the batch's SHA-256 (`walKeyOf`), so other bytes under the same
 * attempt id can never replace a durable WAL object.
 * Refusals here happen before any WAL I/O:
 * - a session the lane never issued (forged) is rejected, nothing written;
 * - the same attempt id with another batch is Stream attempt identity conflict (rejected,
 *   nothing written) whatever the attempt's state: its intent names other bytes, or — no
 *   intent yet — a WAL object of other bytes is already under the attempt's prefix (a
 *   crash after that PUT). Two such appends racing past this check write two distinct
 *   keys; the intent's conditional create picks one, the other is refused by RecordIntent
 *   and its bytes stay unreferenced (orphan grace);
 * - aborted, suspended or fenced: KNOWN_NOT_COMMITTED (a new attempt is safe).
 * A lost or uncertain PUT is resolved by reading the exact key back.
 */
export async function writeWal(input: unknown, ports: Ports): Promise<AttemptRef & { wal: WalRef }> {
  const ref = validateAttemptRef(input);
  const records = decodeRecords(input);
  const bytes = encodeBatch(records);
  const sha256 = sha256Hex(bytes);
  const [head, intent] = await Promise.all([loadHead(ports, ref), loadIntent(ports, ref, ref.attemptId)]);
  await assertSessionIssued(ports, ref, head, ref.session);
  const batch = { walSha256: sha256, walSize: bytes.byteLength, recordCount: records.length };
  if (intent && !intent.tombstone) assertSameBatch(intent, batch);
  // The key the attempt's intent already names (the same batch), else the one derived now.
  const wal: WalRef = { walKey: intent && !intent.tombstone ? intent.walKey : walKeyOf(ref, ref.attemptId, sha256), ...batch };
  if (intent?.state === 'ABORTED') throw new AttemptAbortedError(ref.attemptId, intent.abortReason ?? 'aborted');
  // A re-run of a committed attempt with its own batch: nothing to write, the later steps report it.
  if (intent?.state === 'COMMITTED') return { ...ref, wal };
  if (head.suspendedBy && head.suspendedBy !== ref.attemptId) throw new LaneSuspendedError(ref, head.suspendedBy);
  if (!sameFence(head.fence, ref.session)) throw new FencedError(ref, 'the session does not own the lane');
  if (!intent) {
    const others = (await ports.objects.list(walPrefixOf(ref, ref.attemptId))).filter((key) => key !== wal.walKey);
    if (others.length) throw new AttemptIdentityConflictError(ref.attemptId, 'already has a WAL object of another batch');
  }
  await putExact(ports.objects, STREAM_CUT_POINTS.wal, wal.walKey, bytes, walMetadataOf(ref, ref.attemptId, sha256, records.length));
  return { ...ref, wal };
}

/** The attempt's recorded batch must be exactly this one (checksum, size, record count). */
export function assertSameBatch(intent: AppendIntent, batch: Omit<WalRef, 'walKey'>): void {
  if (intent.walSha256 !== batch.walSha256 || intent.walSize !== batch.walSize || intent.recordCount !== batch.recordCount) {
    throw new AttemptIdentityConflictError(intent.attemptId, `is recorded with another batch (${intent.state})`);
  }
}
