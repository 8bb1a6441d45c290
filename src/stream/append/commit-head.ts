import { EffectFailedError, OutcomeUnknownError } from '../../domain/errors.js';
import { laneKeys, sameFence, type AppendOutcome, type CommitRecord } from '../../domain/stream.js';
import { AttemptAbortedError, FencedError, LaneSuspendedError } from '../../domain/stream-errors.js';
import type { Ports } from '../../ports/index.js';
import { validateAttemptRef } from '../append-input.js';
import { STREAM_CUT_POINTS } from '../cut-points.js';
import { loadHead, loadIntent } from '../lane-store.js';
import { committedOutcome } from '../outcomes.js';

const MAX_ROUNDS = 8;

/**
 * Append step 3, the head CAS: one transaction advances the committed end offset only if
 * the head's version and fence (owner, session, epoch) are the ones just read, creates
 * the commit record for [start, end), and marks the intent COMMITTED with that range.
 * - condition fails because the fence moved: the head did not advance for this attempt
 *   (Stream.Fenced; its bytes stay as evidence for recovery and GC);
 * - response unknown: leaves as Cutpoint.OutcomeUnknown — MAY_HAVE_COMMITTED — for the
 *   flow to suspend the lane and resolve the original attempt.
 * A retry after a crash reloads the exact intent: COMMITTED means it already happened.
 */
export async function commitHead(input: unknown, ports: Ports): Promise<AppendOutcome> {
  const ref = validateAttemptRef(input);
  const cut = STREAM_CUT_POINTS.headCas;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const [head, intent] = await Promise.all([loadHead(ports, ref), loadIntent(ports, ref, ref.attemptId)]);
    if (!intent) throw new AttemptAbortedError(ref.attemptId, 'no intent was recorded');
    if (intent.state === 'COMMITTED') return committedOutcome(intent);
    if (intent.state === 'ABORTED') throw new AttemptAbortedError(ref.attemptId, intent.abortReason ?? 'aborted');
    if (head.suspendedBy) throw new LaneSuspendedError(ref, head.suspendedBy);
    if (!sameFence(head.fence, intent.fence)) throw new FencedError(ref, 'a newer owner session holds the lane');

    const start = head.committedEnd;
    const end = start + intent.recordCount;
    const now = ports.clock.now().toISOString();
    const commit: CommitRecord = {
      stream: ref.stream,
      partition: ref.partition,
      attemptId: ref.attemptId,
      start,
      end,
      walKey: intent.walKey,
      walSha256: intent.walSha256,
      walSize: intent.walSize,
      committedAt: now,
    };
    const outcome = await ports.authority.transact(cut, [
      {
        kind: 'update',
        key: laneKeys.head(ref),
        expect: { version: head.version, fence: intent.fence },
        set: { committedEnd: end, lastAttemptId: ref.attemptId },
      },
      { kind: 'put', item: { ...laneKeys.commit(ref, end), ...commit }, expect: 'absent' },
      { kind: 'update', key: laneKeys.intent(ref, ref.attemptId), expect: { version: intent.version }, set: { state: 'COMMITTED', start, end, committedAt: now } },
    ]);
    if (outcome.status === 'APPLIED') return committedOutcome({ ...intent, start, end });
    if (outcome.status === 'UNKNOWN') {
      throw new OutcomeUnknownError(cut, `${cut}: head CAS for attempt ${ref.attemptId} on ${ref.stream}/${ref.partition} is unknown`);
    }
    // CONFLICT: the next round reloads head and intent and decides again.
  }
  // Every round ended CONFLICT, which proves the CAS did not apply (appends or trims kept
  // moving the head): a definite failure, retried by the flow — never a suspension.
  throw new EffectFailedError(cut, `${cut}: the head kept moving; attempt ${ref.attemptId} was not applied`);
}
