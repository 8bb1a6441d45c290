import { randomUUID } from 'node:crypto';
import { laneKeys, rangeRootOf, type CommitRecord, type LaneHead } from '../../../src/domain/stream.js';
import { runFlow } from '../../../src/local/flow-runner.js';
import { materializeGen0Batch } from '../../../src/stream/append/gen0-batch.js';
import { compactLane } from '../../../src/stream/compaction/compact-lane.js';
import { COMPACTION_CUT_POINTS } from '../../../src/stream/compaction/cut-points.js';
import type { CompactionRecord } from '../../../src/stream/compaction/model.js';
import { commitCursor } from '../../../src/stream/cursor/commit.js';
import { CURSOR_CUT_POINTS } from '../../../src/stream/cursor/cut-points.js';
import { loadCursor } from '../../../src/stream/cursor/store.js';
import { seekCursor, takeoverCursor } from '../../../src/stream/cursor/takeover.js';
import { STREAM_CUT_POINTS } from '../../../src/stream/cut-points.js';
import { GC_FLOW_CUT_POINTS } from '../../../src/stream/gc/cut-points.js';
import { readPage } from './actions.js';
import { messageOf, nameOf, range, TRANSIENT, type History } from './model.js';
import { randomRule } from './plans.js';

/**
 * The lifecycle actors of a stream history (issue #11): generation 0 off the ack path,
 * compaction, GC (the stream-gc flow on the local runner, the clock moved past or short
 * of its grace), and one consumer group whose consumers take the cursor over, read from
 * it and commit as they go. Each runs in-process against the real stores, sometimes with
 * a fault at one of its cut points; what it reports is checked against the model here,
 * what it leaves durable by `checkLifecycle` after every step.
 */

/** What compaction and generation 0 may leave with when a fault outlasts their reruns. */
const MATERIALIZE_ERRORS = new Set([...TRANSIENT, 'Stream.CompactionNotCommitted']);

function armed(h: History, fault: string | undefined): string {
  if (fault) h.operator.faults.arm(fault);
  return fault ? ` [${fault}]` : '';
}

export async function materialize(h: History, fault?: string): Promise<void> {
  const max = h.rng.int(1, 8);
  const tag = armed(h, fault);
  try {
    const r = await materializeGen0Batch({ ...h.lane, max }, h.operator.ports);
    h.note(
      `materialize max ${max}${tag} → ${r.materialized.length} ranges, mark ${r.next}${r.failed ? `, stopped at [${r.failed.start}, ${r.failed.end}) ${r.failed.error}` : ''}`,
    );
    h.check(r.next <= (await headOf(h)).committedEnd, `generation 0 mark ${r.next} past the committed end`);
    h.check(!r.failed || fault !== undefined, `generation 0 failed with no fault: ${JSON.stringify(r.failed)}`);
    // Every WAL object here verifies: no generation 0 has cause to abort.
    h.check(!r.aborted, `generation 0 aborted: ${JSON.stringify(r.aborted)}`);
  } catch (error) {
    h.note(`materialize${tag} → threw ${messageOf(error)}`);
    h.check(fault !== undefined && MATERIALIZE_ERRORS.has(nameOf(error)), `materialize threw ${messageOf(error)}`);
  } finally {
    h.operator.faults.disarm();
  }
}

export function compactionFault(h: History): string | undefined {
  return h.rng.chance(0.35) ? randomRule(h.rng, Object.values(COMPACTION_CUT_POINTS)) : undefined;
}

export function gen0Fault(h: History): string | undefined {
  return h.rng.chance(0.3) ? randomRule(h.rng, [STREAM_CUT_POINTS.gen0]) : undefined;
}

export async function compact(h: History, fault?: string): Promise<void> {
  const maxRanges = h.rng.int(2, 6);
  const tag = armed(h, fault);
  try {
    const r = await compactLane({ ...h.lane, maxRanges }, h.operator.ports);
    const c = r.compacted;
    h.note(
      `compact max ${maxRanges}${tag} → ${c ? `${range(c)} from ${c.ranges} ranges` : 'nothing to compact'}, mark ${r.next}${c && !r.taskCleaned ? ', task kept' : ''}`,
    );
    if (c) {
      h.check(
        c.recordCount === c.end - c.start && c.ranges >= 2,
        `compaction ${range(c)} holds ${c.recordCount} records from ${c.ranges} ranges`,
      );
      h.compactions++;
    }
  } catch (error) {
    h.note(`compact${tag} → threw ${messageOf(error)}`);
    h.check(fault !== undefined && MATERIALIZE_ERRORS.has(nameOf(error)), `compaction threw ${messageOf(error)}`);
  } finally {
    h.operator.faults.disarm();
  }
}

/**
 * One run of the stream-gc flow. `advance` moves the shared clock first (past the grace
 * or short of it); a reader racing GC runs with no advance, so its lease stays valid.
 */
export async function gc(h: History, options: { fault?: string; advanceSeconds?: number } = {}): Promise<void> {
  const { fault, advanceSeconds = 0 } = options;
  if (advanceSeconds) h.actors.clock.advance(advanceSeconds * 1000);
  const tag = armed(h, fault);
  try {
    const run = await runFlow(
      'stream-gc',
      { ...h.lane, grace: `${h.actors.graceSeconds}s` },
      { ports: h.operator.ports, retryIntervalMs: 0 },
    );
    const out = run.output as { totals?: Record<string, number> } | undefined;
    h.note(
      `gc (+${advanceSeconds}s)${tag} → ${run.status}${run.error ? ` ${run.error}` : ''}${out?.totals ? ` ${JSON.stringify(out.totals)}` : ''}`,
    );
    h.check(
      run.status === 'SUCCEEDED' || fault !== undefined,
      `the GC flow failed with no fault: ${run.error}: ${run.cause}`,
    );
    if (run.status === 'SUCCEEDED') h.gcRuns++;
  } finally {
    h.operator.faults.disarm();
  }
}

export function gcFault(h: History): string | undefined {
  return h.rng.chance(0.4) ? randomRule(h.rng, GC_FLOW_CUT_POINTS) : undefined;
}

/** A new consumer takes the group's cursor over: the previous one is fenced. */
export async function consumerTakeover(h: History, fault?: string): Promise<void> {
  const index = h.consumers.length;
  const input = { ...h.lane, group: h.group, owner: `consumer-${index}`, session: randomUUID() };
  const previous = h.cursor?.epoch ?? 0;
  const { reader } = h.actors;
  if (fault) reader.faults.arm(fault);
  let result;
  try {
    result = await takeoverCursor(input, reader.ports);
  } catch (error) {
    h.note(`cursor takeover c${index} [${fault}] → threw ${messageOf(error)}; again with the same session`);
    h.check(fault !== undefined && TRANSIENT.has(nameOf(error)), `cursor takeover threw ${messageOf(error)}`);
    reader.faults.disarm();
    result = await takeoverCursor(input, reader.ports);
  } finally {
    reader.faults.disarm();
  }
  h.check(result.epoch === previous + 1, `cursor takeover c${index}: epoch ${result.epoch} after ${previous}`);
  // Without a retention policy a trim may have passed the cursor: the consumer finds out when it reads (and seeks).
  const floor = h.policy || !h.cursor ? h.head.trimOffset : 0;
  h.check(
    result.position >= floor && result.position <= result.committedEnd,
    `cursor takeover c${index} at ${result.position} outside [${floor}, ${result.committedEnd}]`,
  );
  h.consumers.push({ index, fence: { owner: input.owner, session: input.session, epoch: result.epoch } });
  h.consumer = index;
  h.note(
    `cursor takeover → c${index} consumes at epoch ${result.epoch} from ${result.position}${fault ? ` [${fault}]` : ''}`,
  );
}

/**
 * A consumer reads from the group's committed cursor and commits past what it read. A
 * stale consumer (fenced by a later takeover) reads but its commit is refused, nothing
 * written. Without a retention policy a trim may pass the cursor: the consumer finds its
 * position trimmed and seeks to the trim offset, explicitly.
 */
export async function consume(h: History): Promise<void> {
  if (h.consumer < 0) return consumerTakeover(h);
  const stale = h.consumers.filter((c) => c.index !== h.consumer);
  const c = stale.length && h.rng.chance(0.2) ? h.rng.pick(stale) : h.consumers[h.consumer]!;
  const who = `c${c.index}${c.index === h.consumer ? '' : '(stale)'}`;
  const { reader } = h.actors;
  const cursor = await loadCursor(reader.ports, h.lane, h.group);
  h.check(cursor, `the group ${h.group} has consumers but no cursor`);
  const committedEnd = h.head.committedEnd;
  const { result, error } = await readPage(h, { from: cursor.position, maxRecords: h.rng.int(1, 30) }, committedEnd);
  if (error !== undefined) {
    h.check(
      nameOf(error) === 'Stream.OffsetTrimmed' && !h.policy,
      `${who} read from its cursor ${cursor.position}: ${messageOf(error)}`,
    );
    if (c.index !== h.consumer) return;
    const to = (await headOf(h)).trimOffset;
    const sought = await seekCursor(
      { ...h.lane, group: h.group, owner: c.fence.owner, session: c.fence.session, to },
      reader.ports,
    );
    h.seekedAt = h.step;
    h.note(`${who} found ${cursor.position} trimmed → seek to ${sought.position} (epoch ${sought.epoch})`);
    return;
  }
  const fault = h.rng.chance(0.3) ? randomRule(h.rng, [CURSOR_CUT_POINTS.commit]) : undefined;
  if (fault) reader.faults.arm(fault);
  try {
    const done = await commitCursor(
      { ...h.lane, group: h.group, session: c.fence, position: result!.next },
      reader.ports,
    );
    h.note(
      `${who} consumed [${cursor.position}, ${result!.next})${fault ? ` [${fault}]` : ''} → cursor ${done.position}`,
    );
    h.check(
      c.index === h.consumer,
      `${who}, fenced at epoch ${c.fence.epoch}, committed the cursor to ${done.position}`,
    );
    h.check(done.position === result!.next, `${who} committed ${result!.next}, the cursor says ${done.position}`);
  } catch (e) {
    h.note(
      `${who} consumed [${cursor.position}, ${result!.next})${fault ? ` [${fault}]` : ''} → commit refused: ${messageOf(e)}`,
    );
    const fenced = nameOf(e) === 'Stream.CursorFenced' && c.index !== h.consumer;
    h.check(
      fenced || (fault !== undefined && TRANSIENT.has(nameOf(e))),
      `${who} commit to ${result!.next} threw ${messageOf(e)}`,
    );
  } finally {
    reader.faults.disarm();
  }
}

async function headOf(h: History): Promise<LaneHead> {
  return (await h.operator.ports.authority.get(laneKeys.head(h.lane))) as unknown as LaneHead;
}

/**
 * After every step, what the lifecycle left durable:
 * - the group's cursor never past the committed end, never back outside a seek, and —
 *   when the retention policy names the group — never below the trim (a trim waits for it);
 * - compactions never overlap, each covers whole committed ranges, below the committed end;
 * - no copy is quarantined: the history never corrupts a byte, so a quarantined copy means
 *   a reader found bytes missing that it was promised (GC deleted under its lease).
 */
export async function checkLifecycle(h: History, head: LaneHead, commits: CommitRecord[]): Promise<void> {
  const cursor = await loadCursor(h.operator.ports, h.lane, h.group);
  if (cursor) {
    h.check(
      cursor.position <= head.committedEnd,
      `cursor ${cursor.position} past the committed end ${head.committedEnd}`,
    );
    if (h.cursor && h.seekedAt !== h.step)
      h.check(
        cursor.position >= h.cursor.position,
        `cursor moved back ${h.cursor.position} → ${cursor.position} without a seek`,
      );
    if (h.policy)
      h.check(
        head.trimOffset <= cursor.position,
        `the trim offset ${head.trimOffset} passed the cursor ${cursor.position} the retention policy names`,
      );
    h.check(cursor.fence.epoch >= (h.cursor?.epoch ?? 0), `cursor epoch went back to ${cursor.fence.epoch}`);
    h.cursor = { position: cursor.position, epoch: cursor.fence.epoch };
  } else {
    h.check(
      !h.policy || head.trimOffset === 0,
      `the policy names ${h.group}, which has no cursor yet, but the lane is trimmed to ${head.trimOffset}`,
    );
  }
  const quarantined = await h.operator.ports.authority.query(laneKeys.pk(h.lane), 'quarantine#');
  h.check(
    quarantined.length === 0,
    `copies quarantined: ${quarantined.map((q) => `${String(q.objectKey)} (${String(q.reason)})`).join(', ')}`,
  );
  const starts = new Set(commits.map((c) => c.start));
  const ends = new Set(commits.map((c) => c.end));
  let last = 0;
  for (const c of await compactionsOf(h)) {
    h.check(c.start >= last, `compaction ${range(c)} overlaps the one before it (ending at ${last})`);
    h.check(
      starts.has(c.start) && ends.has(c.end) && c.end <= head.committedEnd,
      `compaction ${range(c)} does not cover whole committed ranges`,
    );
    last = c.end;
  }
}

export async function compactionsOf(h: History): Promise<CompactionRecord[]> {
  return (await h.operator.ports.authority.query(laneKeys.pk(h.lane), 'compaction#')) as unknown as CompactionRecord[];
}

/** The key prefix of a range's generation 0 objects. */
export const gen0PrefixOf = (h: History, start: number): string => `generations/${rangeRootOf(h.lane, start)}/`;
