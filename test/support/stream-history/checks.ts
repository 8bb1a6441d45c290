import { laneKeys, type CommitRecord, type LaneHead } from '../../../src/domain/stream.js';
import { expectLaneInvariant } from '../stream-fixture.js';
import { append, read, resolve, type StepContext } from './actions.js';
import { checkLifecycle } from './lifecycle.js';
import { messageOf, range, type History } from './model.js';

/**
 * The stream history's durable checks: after every step the head and the commit chain
 * against the model (`checkDurable`), and at the end every attempt settled, every record
 * read back page by page, and the lane invariant (`settleEverything`).
 */

/** After every step: the head and the commit chain against the model. */
export async function checkDurable(h: History, ctx?: StepContext): Promise<void> {
  const head = (await h.operator.ports.authority.get(laneKeys.head(h.lane))) as unknown as LaneHead;
  h.check(
    head.committedEnd >= h.head.committedEnd,
    `committed end went backwards: ${h.head.committedEnd} → ${head.committedEnd}`,
  );
  h.check(
    head.trimOffset >= h.head.trimOffset,
    `trim offset went backwards: ${h.head.trimOffset} → ${head.trimOffset}`,
  );
  h.check(head.trimOffset === h.trim, `trim offset is ${head.trimOffset}, the trims called moved it to ${h.trim}`);
  h.check(
    head.trimOffset <= head.committedEnd,
    `trim offset ${head.trimOffset} past the committed end ${head.committedEnd}`,
  );
  if (ctx?.suspendedBy) {
    h.check(
      head.committedEnd === h.head.committedEnd,
      `the lane was suspended by ${ctx.suspendedBy}, yet the committed end moved ${h.head.committedEnd} → ${head.committedEnd}`,
    );
  }

  const commits = (await h.operator.ports.authority.query(laneKeys.pk(h.lane), 'commit#')) as unknown as CommitRecord[];
  const durable = new Map<string, { start: number; end: number }>();
  const payloadBy = new Map<number, string>();
  let expectedStart = 0;
  for (const c of commits) {
    h.check(
      c.start === expectedStart,
      `commit chain: ${c.attemptId} ${range(c)} where ${expectedStart} was next (gap or overlap)`,
    );
    h.check(c.end > c.start, `commit chain: empty range ${range(c)} for ${c.attemptId}`);
    expectedStart = c.end;
    const a = h.attempts.get(c.attemptId);
    h.check(a, `commit chain names ${c.attemptId}, which this history never started`);
    h.check(c.end - c.start === a.records.length, `commit ${a.id} ${range(c)} for ${a.records.length} records`);
    h.check(!durable.has(a.id), `${a.id} committed twice`);
    h.check(
      a.status !== 'not-committed',
      `${a.id} was reported KNOWN_NOT_COMMITTED at step ${a.settledAt} (${a.settledHow}), but the lane holds its commit ${range(c)}`,
    );
    if (a.status === 'committed')
      h.check(a.start === c.start && a.end === c.end, `${a.id} reported ${range(a)}, committed ${range(c)}`);
    const other = payloadBy.get(a.payload);
    h.check(
      other === undefined,
      `payload p${a.payload} committed twice: by ${other} and by ${a.id} (re-sent after KNOWN_NOT_COMMITTED)`,
    );
    payloadBy.set(a.payload, a.id);
    durable.set(a.id, { start: c.start, end: c.end });
  }
  h.check(
    expectedStart === head.committedEnd,
    `commit chain ends at ${expectedStart}, the head at ${head.committedEnd}`,
  );
  for (const a of h.attempts.values()) {
    if (a.status === 'committed')
      h.check(durable.has(a.id), `${a.id} reported KNOWN_COMMITTED ${range(a)} has no commit record`);
  }
  if (head.suspendedBy) {
    const a = h.attempts.get(head.suspendedBy);
    h.check(
      a && a.status !== 'committed',
      `the lane is suspended by ${head.suspendedBy} (${a?.status ?? 'unknown attempt'})`,
    );
    if (!h.head.suspendedBy) h.suspendedSince = h.step;
  }
  await checkLifecycle(h, head, commits);
  h.head = {
    committedEnd: head.committedEnd,
    trimOffset: head.trimOffset,
    ...(head.suspendedBy ? { suspendedBy: head.suspendedBy } : {}),
  };
  h.durable = durable;
}

export function contextOf(h: History): StepContext {
  return {
    ...(h.head.suspendedBy ? { suspendedBy: h.head.suspendedBy } : {}),
    committedBefore: new Set(h.durable.keys()),
  };
}

/** Faults off; every open attempt re-run or resolved, the lane released; then the full checks. */
export async function settleEverything(h: History): Promise<void> {
  for (const w of h.writers) w.faults.disarm();
  h.operator.faults.disarm();
  for (let round = 0; round < 12; round++) {
    h.step++;
    await checkDurable(h);
    const pending = h.pending();
    const suspended = h.head.suspendedBy;
    if (!pending.length && !suspended) break;
    h.note(`— settle: ${pending.length} pending${suspended ? `, lane suspended by ${suspended}` : ''}`);
    if (suspended) await resolve(h, h.attempts.get(suspended)!);
    for (const a of pending) {
      if (a.status !== 'open' && a.status !== 'may-have') continue;
      if (a.status === 'open' && h.rng.chance(0.5)) await append(h, a, contextOf(h));
      else await resolve(h, a);
    }
  }
  await checkSettled(h);
}

/**
 * Once everything settled (the head as of the last `checkDurable`): every attempt has a
 * final outcome, the lane is not suspended, every committed offset was reported by its
 * attempt, no read returned a record that did not commit, the lane reads back exactly as
 * reported, and the lane invariant holds for every acknowledged batch.
 */
export async function checkSettled(h: History): Promise<void> {
  h.check(
    h.pending().length === 0,
    `attempts still without a final outcome: ${h
      .pending()
      .map((a) => `${a.id} (${a.status})`)
      .join(', ')}`,
  );
  h.check(!h.head.suspendedBy, `the lane is still suspended by ${h.head.suspendedBy}`);
  for (const a of h.attempts.values())
    h.check(a.status === 'committed' || a.status === 'not-committed', `${a.id} ended ${a.status}`);

  const { trimOffset, committedEnd } = h.head;
  for (let offset = trimOffset; offset < committedEnd; offset++)
    h.check(h.log.has(offset), `offset ${offset} is committed but no attempt reported it`);
  h.check(
    h.observed.size === 0,
    `reads returned records no attempt ended up committing: offsets ${[...h.observed.keys()].join(', ')}`,
  );
  await readBackAll(h);
  const acknowledged = [...h.attempts.values()]
    .filter((a) => a.status === 'committed')
    .sort((x, y) => x.start! - y.start!)
    .map((a) => ({ attemptId: a.id, records: a.records }));
  await expectLaneInvariant(h.operator.ports, h.lane, acknowledged);
}

/** Every committed record from the trim on, page by page, exactly as the history says. */
export async function readBackAll(h: History): Promise<void> {
  const { trimOffset, committedEnd } = h.head;
  for (let from = trimOffset; from < committedEnd;) {
    const plan = { from, maxRecords: h.rng.int(7, 60) };
    const error = await read(h, plan, committedEnd);
    h.check(error === undefined, `final read from ${from} threw ${messageOf(error)}`);
    from = Math.min(committedEnd, from + plan.maxRecords);
  }
}
