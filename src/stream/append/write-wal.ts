import { sha256Hex } from '../../domain/digest.js';
import { encodeBatch } from '../../domain/record-batch.js';
import {
  AttemptAbortedError,
  FencedError,
  LaneSuspendedError,
  sameFence,
  walKeyOf,
  walMetadataOf,
} from '../../domain/stream.js';
import { putExact } from '../../objects/exact-object.js';
import type { Ports } from '../../ports/index.js';
import { decodeRecords, validateAttemptRef, type AttemptRef, type WalRef } from '../append-input.js';
import { STREAM_CUT_POINTS } from '../cut-points.js';
import { loadHead, loadIntent } from '../lane-store.js';

/**
 * Append step 1: the batch's WAL bytes, one object under the attempt's exact identity.
 * Refusals here happen before any WAL I/O (KNOWN_NOT_COMMITTED: a new attempt is safe).
 * A lost or uncertain PUT is resolved by reading the exact key back (reuse the exact
 * object identity, never guess a new one); bytes that never get an intent stay
 * unreferenced and enter orphan grace.
 */
export async function writeWal(input: unknown, ports: Ports): Promise<AttemptRef & { wal: WalRef }> {
  const ref = validateAttemptRef(input);
  const records = decodeRecords(input);
  const intent = await loadIntent(ports, ref, ref.attemptId);
  if (intent?.state === 'ABORTED') throw new AttemptAbortedError(ref.attemptId, intent.abortReason ?? 'aborted');
  if (intent?.state === 'COMMITTED') {
    // A re-run of a committed attempt: nothing to write, the later steps report it.
    return { ...ref, wal: { walKey: intent.walKey, walSha256: intent.walSha256, walSize: intent.walSize, recordCount: intent.recordCount } };
  }
  const head = await loadHead(ports, ref);
  if (head.suspendedBy && head.suspendedBy !== ref.attemptId) throw new LaneSuspendedError(ref, head.suspendedBy);
  if (!sameFence(head.fence, ref.session)) throw new FencedError(ref, 'the session does not own the lane');

  const bytes = encodeBatch(records);
  const sha256 = sha256Hex(bytes);
  const walKey = walKeyOf(ref, ref.attemptId);
  await putExact(ports.objects, STREAM_CUT_POINTS.wal, walKey, bytes, walMetadataOf(ref, ref.attemptId, sha256, records.length));
  return { ...ref, wal: { walKey, walSha256: sha256, walSize: bytes.byteLength, recordCount: records.length } };
}
