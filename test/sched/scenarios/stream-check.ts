import { laneKeys, type CommitRecord, type LaneHead } from '../../../src/domain/stream.js';
import { readStream } from '../../../src/stream/read.js';
import { resolveAppend } from '../../../src/stream/resolve.js';
import { InvariantViolation } from '../../support/sched/errors.js';
import { checkDurable, checkSettled } from '../../support/stream-history/checks.js';
import { checkLiveKept, settleLifecycle } from '../../support/stream-history/final-gc.js';
import { decode, range, settle, type History } from '../../support/stream-history/model.js';
import { completed, type StreamRun } from './stream-actors.js';
import { checkLogHistory } from '../../support/stream-history/log-linearizable.js';

/**
 * The stream scenario's settle and history checker. Settle (faults off) resolves every
 * attempt still without a final outcome, as the recovery dispatcher and an operator would,
 * until the lane is no longer suspended. The checker then demands, over what the actors
 * were told (the stream history's model, test/support/stream-history/model.ts) and what is
 * durable:
 * - every attempt has one final outcome; KNOWN_COMMITTED ranges never changed across
 *   reports and KNOWN_NOT_COMMITTED never later committed (checked as each report came
 *   back, and against the commit chain here: `checkDurable`);
 * - the commit chain is contiguous from 0 to the head, each attempt at most once; the
 *   committed end and the trim never went behind what any actor had seen;
 * - a fenced writer never committed after the takeover: a commit of an older epoch ends
 *   at or below the committed end the takeover's CAS saw;
 * - reads (checked as they returned) and a final read-back return exactly the committed
 *   records, and no read returned a record whose attempt did not commit;
 * - the lane invariant (every acknowledged batch exactly once, in order, not suspended);
 * - GC past every grace deletes exactly the collectible objects, each once per life
 *   (test/support/stream-history/final-gc.ts).
 */

export async function settleStream(run: StreamRun): Promise<void> {
  const h: History = run.h;
  for (let round = 0; round < 6; round++) {
    const head = await headOf(run);
    const pending = h.pending();
    if (!pending.length && !head.suspendedBy) return;
    const holder = head.suspendedBy ? h.attempts.get(head.suspendedBy) : undefined;
    for (const a of holder && !pending.includes(holder) ? [holder, ...pending] : pending) {
      const op = run.ops.invoke('settle', 'resolve', { attempt: a.id });
      const result = await resolveAppend({ ...run.lane, attemptId: a.id }, run.ports);
      completed(op, result);
      run.s.note(`settle: resolve ${a.id} → ${result.status}${result.start === undefined ? '' : ` ${range(result)}`}`);
      try {
        settle(h, a, result, 'settle-resolve');
      } catch (error) {
        run.broken.push(`settle: ${(error as Error).message}`);
        return; // the checker reports it
      }
    }
  }
}

export async function checkStream(run: StreamRun): Promise<void> {
  const h: History = run.h;
  try {
    // The clients' history first, against the durable commit chain alone (log-linearizable.ts),
    // ending with a final read of the whole lane (faults off).
    const head = await headOf(run);
    await finalRead(run, head);
    const chain = (await run.ports.authority.query(laneKeys.pk(run.lane), 'commit#')) as unknown as CommitRecord[];
    const history = checkLogHistory(run.ops, chain, head.trimOffset);
    if (history.length > 0)
      throw new InvariantViolation(
        `stream ${run.lane.stream}: the history is not linearizable: ${history[0]}${history.length > 1 ? ` (and ${history.length - 1} more)` : ''}`,
      );
    h.check(run.broken.length === 0, `an actor found an invariant broken as it ran: ${run.broken[0]}`);
    // A trim whose caller saw no outcome either applied or not: the head says which.
    if (run.trimTo !== undefined && head.trimOffset === run.trimTo) h.trim = run.trimTo;
    await checkDurable(h);
    await checkFencing(run);
    await checkSettled(h);
    // No live byte deleted by the scheduled GC, no key deleted twice in one life; in some
    // schedules (the cost of three GC runs) GC past every grace collects all the rest.
    if (run.finalGc) await settleLifecycle(h);
    else await checkLiveKept(h);
    const committed = [...h.attempts.values()].filter((a) => a.status === 'committed').length;
    run.s.note(
      `check: end ${h.head.committedEnd}, trim ${h.head.trimOffset}, ${committed} committed of ${h.attempts.size} attempts, ${[...h.actors.deletes.values()].reduce((n, d) => n + d, 0)} deletes`,
    );
  } catch (error) {
    if (error instanceof InvariantViolation) throw error;
    const e = error as Error;
    if (e.name === 'HistoryError' || e.name === 'AssertionError')
      throw new InvariantViolation(`stream ${run.lane.stream}: ${e.message}`);
    throw error;
  } finally {
    for (const line of h.trace) run.s.note(line);
  }
}

/** Reads the lane from its trim to its committed end, page by page, each page a read in the history. */
async function finalRead(run: StreamRun, head: LaneHead): Promise<void> {
  for (let at = head.trimOffset, round = 0; at < head.committedEnd && round < 64; round++) {
    const op = run.ops.invoke('final-read', 'read', { from: at, maxRecords: 100 });
    const result = await readStream({ ...run.lane, from: at, maxRecords: 100 }, run.ports);
    op.ok({ records: result.records.map((r) => decode(r.data)), committedEnd: result.committedEnd });
    if (result.records.length === 0) return;
    at = result.next;
  }
}

/** A commit of an older epoch ends at or below the committed end its successor's takeover CAS saw. */
async function checkFencing(run: StreamRun): Promise<void> {
  const h: History = run.h;
  const commits = (await run.ports.authority.query(laneKeys.pk(run.lane), 'commit#')) as unknown as CommitRecord[];
  for (const c of commits) {
    const a = h.attempts.get(c.attemptId)!;
    const epoch = h.writers[a.writer]!.fence.epoch;
    for (const t of run.takeovers) {
      h.check(
        t.epoch <= epoch || c.end <= t.committedEnd,
        `writer ${a.writer} (epoch ${epoch}) committed ${a.id} ${range(c)} after the takeover to epoch ${t.epoch} at committed end ${t.committedEnd}`,
      );
    }
  }
}

async function headOf(run: StreamRun): Promise<LaneHead> {
  return (await run.ports.authority.get(laneKeys.head(run.lane))) as unknown as LaneHead;
}
