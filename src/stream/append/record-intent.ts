import { laneKeys, sameFence, type AppendIntent } from '../../domain/stream.js';
import { AttemptAbortedError, AttemptIdentityConflictError, FencedError } from '../../domain/stream-errors.js';
import { writeExactlyOnce } from '../../authority/resolve.js';
import type { Ports } from '../../ports/index.js';
import { validateAttemptRef, validateWalRef, type AttemptRef, type WalRef } from '../append-input.js';
import { STREAM_CUT_POINTS } from '../cut-points.js';
import { asIntent } from '../lane-store.js';

/**
 * Append step 2: durable pending evidence of the attempt (its WAL identity and session),
 * before the head CAS. The logical range is not visible yet. A retry reuses the same
 * intent; a different batch under the same attempt id is refused.
 */
export async function recordIntent(input: unknown, ports: Ports): Promise<AttemptRef & { wal: WalRef }> {
  const ref = validateAttemptRef(input);
  const wal = validateWalRef(input);
  const key = laneKeys.intent(ref, ref.attemptId);
  const intent: Omit<AppendIntent, 'version'> = {
    stream: ref.stream,
    partition: ref.partition,
    attemptId: ref.attemptId,
    ...wal,
    fence: ref.session,
    state: 'PENDING',
  };
  const sameAttempt = (i: AppendIntent) => i.walKey === wal.walKey && i.walSha256 === wal.walSha256 && i.recordCount === wal.recordCount;
  const outcome = await writeExactlyOnce(
    ports.authority,
    STREAM_CUT_POINTS.intent,
    key,
    () => ports.authority.put(STREAM_CUT_POINTS.intent, { ...key, ...intent, createdAt: ports.clock.now().toISOString() }, 'absent'),
    (item) => sameAttempt(asIntent(item)) && sameFence(asIntent(item).fence, ref.session),
  );
  if (outcome.status === 'CONFLICT') {
    const current = outcome.current ? asIntent(outcome.current) : undefined;
    // Another batch under this attempt id (a racing append of other bytes won the intent):
    // refused, whatever that attempt's state; these bytes stay unreferenced.
    if (current && !current.tombstone && !sameAttempt(current)) {
      throw new AttemptIdentityConflictError(ref.attemptId, `is recorded with another batch (${current.state})`);
    }
    // A retired attempt (or its tombstone, which names no batch) is spent for good.
    if (current?.state === 'ABORTED') throw new AttemptAbortedError(ref.attemptId, current.abortReason ?? 'aborted');
    if (current && sameAttempt(current)) {
      // Already past the head CAS: the later steps report it.
      if (current.state === 'COMMITTED') return { ...ref, wal };
      // The same batch, started by an earlier owner session: that attempt is fenced for
      // good (a session never comes back), so it is retired, not adopted.
      throw new FencedError(ref, `attempt ${ref.attemptId} was started by an earlier owner session`);
    }
    throw new AttemptIdentityConflictError(ref.attemptId, 'already names another batch or session');
  }
  return { ...ref, wal };
}
