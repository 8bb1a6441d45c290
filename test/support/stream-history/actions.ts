import { awsPorts } from '../../../src/adapters/ports.js';
import { FaultSwitch } from '../../../src/adapters/fault-injector.js';
import type { AppendOutcome } from '../../../src/domain/stream.js';
import { appendBatch } from '../../../src/stream/append-batch.js';
import { readStream, type ReadResult } from '../../../src/stream/read.js';
import { resolveAppend } from '../../../src/stream/resolve.js';
import { takeoverLane } from '../../../src/stream/takeover.js';
import { trimLane } from '../../../src/stream/trim.js';
import { decode, encode, messageOf, nameOf, range, settle, TRANSIENT, type Attempt, type History } from './model.js';
import type { ReadPlan } from './plans.js';

/**
 * The stream history's writer and operator actions — append, resolve, takeover, trim,
 * read — each run through the in-process library, its outcome checked against the model
 * as it comes back.
 */

export interface StepContext {
  /** The attempt suspending the lane when the step began. */
  suspendedBy?: string;
  /** Attempts with a commit record when the step began. */
  committedBefore: ReadonlySet<string>;
}

export async function append(
  h: History,
  a: Attempt,
  ctx: StepContext,
  fault?: string,
): Promise<AppendOutcome | undefined> {
  const w = h.writers[a.writer]!;
  const who = h.describeWriter(a.writer);
  const injector = fault ? w.faults.arm(fault) : undefined;
  let outcome: AppendOutcome | undefined;
  let thrown: unknown;
  try {
    outcome = await appendBatch(
      { ...h.lane, attemptId: a.id, session: w.fence, records: a.records.map(encode) },
      w.ports,
    );
  } catch (error) {
    thrown = error;
  } finally {
    if (injector) w.faults.disarm();
  }
  const fired = injector ? ` [${fault}, fired ${injector.fired.length}]` : '';
  const head = `append ${a.id} by ${who}, ${a.records.length} rec (was ${a.status})${fired}`;
  if (thrown !== undefined) {
    h.note(`${head} → threw ${messageOf(thrown)}`);
    h.check(TRANSIENT.has(nameOf(thrown)), `append ${a.id} threw ${messageOf(thrown)}: not an unknown outcome`);
    return undefined; // unknown client outcome: the attempt stays open (or may-have)
  }
  h.note(
    `${head} → ${outcome!.status}${outcome!.start === undefined ? '' : ` ${range(outcome!)}`}${outcome!.reason ? ` (${outcome!.reason})` : ''}${outcome!.pendingRepairs ? ` repairs pending: ${outcome!.pendingRepairs.join(',')}` : ''}`,
  );
  if (ctx.suspendedBy) {
    const ok =
      outcome!.status === 'KNOWN_NOT_COMMITTED' ||
      (outcome!.status === 'MAY_HAVE_COMMITTED' && a.id === ctx.suspendedBy) ||
      (outcome!.status === 'KNOWN_COMMITTED' && ctx.committedBefore.has(a.id));
    h.check(
      ok,
      `the lane was suspended by ${ctx.suspendedBy}, yet append ${a.id} came back ${outcome!.status} ${range(outcome!)}`,
    );
  }
  settle(h, a, outcome!, 'append');
  return outcome;
}

export async function resolve(h: History, a: Attempt, fault?: string): Promise<void> {
  const injector = fault ? h.operator.faults.arm(fault) : undefined;
  try {
    const result = await resolveAppend({ ...h.lane, attemptId: a.id }, h.operator.ports);
    h.note(
      `resolve ${a.id} (was ${a.status})${fault ? ` [${fault}]` : ''} → ${result.status}${result.start === undefined ? '' : ` ${range(result)}`}${result.unsuspended ? ', lane released' : ''}`,
    );
    settle(h, a, result, 'resolve');
  } catch (error) {
    h.note(`resolve ${a.id}${fault ? ` [${fault}, fired ${injector?.fired.length}]` : ''} → threw ${messageOf(error)}`);
    h.check(fault !== undefined && TRANSIENT.has(nameOf(error)), `resolve ${a.id} threw ${messageOf(error)}`);
  } finally {
    if (injector) h.operator.faults.disarm();
  }
}

export async function takeover(h: History, fault?: string): Promise<void> {
  const index = h.writers.length;
  const session = `history-${h.seed}-writer-${index}-session`;
  const faults = new FaultSwitch();
  const ports = { ...awsPorts(h.config, faults), clock: h.actors.clock };
  const input = { ...h.lane, owner: `writer-${index}`, session };
  const previousEpoch = h.writers[h.owner]?.fence.epoch ?? 0;
  if (fault) faults.arm(fault);
  let result;
  try {
    result = await takeoverLane(input, ports);
  } catch (error) {
    h.note(`takeover w${index} [${fault}] → threw ${messageOf(error)}; again with the same session`);
    h.check(fault !== undefined && TRANSIENT.has(nameOf(error)), `takeover threw ${messageOf(error)}`);
    faults.disarm();
    result = await takeoverLane(input, ports);
  } finally {
    faults.disarm();
  }
  h.check(
    result.owner === input.owner && !('session' in result),
    `takeover w${index} came back as ${JSON.stringify(result)}`,
  );
  h.check(result.epoch === previousEpoch + 1, `takeover w${index}: epoch ${result.epoch} after ${previousEpoch}`);
  const fence = { owner: input.owner, session, epoch: result.epoch };
  h.writers.push({ index, fence, ports, faults });
  h.owner = index;
  h.note(`takeover → w${index} owns the lane at epoch ${result.epoch}${fault ? ` [${fault}]` : ''}`);
}

export async function trim(h: History, to: number, fault?: string): Promise<void> {
  const before = h.trim;
  const cursorBefore = h.cursor?.position ?? h.trim;
  if (fault) h.operator.faults.arm(fault);
  let result;
  try {
    result = await trimLane({ ...h.lane, to }, h.operator.ports);
  } catch (error) {
    if (trimRefused(h, to, error, cursorBefore)) return;
    h.note(`trim to ${to} [${fault}] → threw ${messageOf(error)}; again`);
    h.check(fault !== undefined && TRANSIENT.has(nameOf(error)), `trim to ${to} threw ${messageOf(error)}`);
    h.operator.faults.disarm();
    try {
      result = await trimLane({ ...h.lane, to }, h.operator.ports);
    } catch (again) {
      if (trimRefused(h, to, again, cursorBefore)) return;
      throw again;
    }
  } finally {
    h.operator.faults.disarm();
  }
  h.check(to >= before, `trim to ${to} below the trim offset ${before} succeeded (now ${result.trimOffset})`);
  h.check(result.trimOffset === to, `trim to ${to} left the trim offset at ${result.trimOffset}`);
  h.trim = Math.max(h.trim, result.trimOffset);
  h.note(
    `trim to ${to}${fault ? ` [${fault}]` : ''} → trim offset ${result.trimOffset} (was ${result.previousTrimOffset})`,
  );
}

/**
 * A trim the lane refused: backwards (below the trim offset), or past the slowest cursor
 * the retention policy names. A cursor only moves forward outside a seek (and nothing
 * seeks under a policy), so a refusal means the cursor was below `to` when the step began.
 */
function trimRefused(h: History, to: number, error: unknown, cursorBefore: number): boolean {
  if (nameOf(error) === 'Stream.TrimBackwards') {
    h.note(`trim to ${to} → refused: ${messageOf(error)}`);
    h.check(to < h.trim, `trim to ${to} was refused as backwards, but the trim offset is ${h.trim}`);
    return true;
  }
  if (nameOf(error) === 'Stream.TrimPastCursor') {
    h.note(`trim to ${to} → refused: ${messageOf(error)}`);
    h.check(h.policy, `trim to ${to} was refused for a cursor, but no retention policy names one: ${messageOf(error)}`);
    h.check(cursorBefore < to, `trim to ${to} was refused for a cursor, but the group's cursor was at ${cursorBefore}`);
    return true;
  }
  return false;
}

/** Runs one read; returns the error if it threw (the caller decides whether that is allowed). */
export async function read(h: History, plan: ReadPlan, committedEndBefore: number): Promise<unknown> {
  return (await readPage(h, plan, committedEndBefore)).error;
}

/** One read on the reader's ports, its page checked against the model. */
export async function readPage(
  h: History,
  plan: ReadPlan,
  committedEndBefore: number,
): Promise<{ result?: ReadResult; error?: unknown }> {
  const { reader } = h.actors;
  if (plan.fault) reader.faults.arm(plan.fault);
  let result: ReadResult;
  try {
    result = await readStream(
      { ...h.lane, from: plan.from, ...(plan.maxRecords === undefined ? {} : { maxRecords: plan.maxRecords }) },
      reader.ports,
    );
  } catch (error) {
    h.note(`read from ${plan.from}${plan.fault ? ` [${plan.fault}]` : ''} → threw ${messageOf(error)}`);
    return { error };
  } finally {
    if (plan.fault) reader.faults.disarm();
  }
  h.note(
    `read from ${plan.from} max ${plan.maxRecords ?? 'default'}${plan.fault ? ` [${plan.fault}]` : ''} → ${result.records.length} records, next ${result.next}, ` +
      `end ${result.committedEnd}, trim ${result.trimOffset}${result.repairs.length ? `, ${result.repairs.length} index repairs` : ''}`,
  );
  verifyRead(h, plan, result, committedEndBefore);
  return { result };
}

export function verifyRead(h: History, plan: ReadPlan, result: ReadResult, committedEndBefore: number): void {
  const { from } = plan;
  const max = plan.maxRecords ?? 100;
  const n = result.records.length;
  h.check(result.from === from, `read from ${from} answered from ${result.from}`);
  h.check(result.trimOffset <= from, `read from ${from} succeeded below its own trim offset ${result.trimOffset}`);
  h.check(
    result.committedEnd >= committedEndBefore,
    `read saw committed end ${result.committedEnd}, behind ${committedEndBefore} seen earlier`,
  );
  h.check(result.next === from + n, `read from ${from}: next ${result.next} after ${n} records`);
  h.check(
    result.next <= result.committedEnd,
    `read from ${from}: next ${result.next} past the committed end ${result.committedEnd}`,
  );
  // Below the committed end a read is never EOF and never short (records are tiny here).
  const expected = Math.max(0, Math.min(max, result.committedEnd - from));
  h.check(
    n === expected || result.repairs.length >= 64,
    `read from ${from} (max ${max}) returned ${n} records of [${from}, ${result.committedEnd})`,
  );
  result.records.forEach((record, i) => {
    const offset = from + i;
    h.check(
      record.offset === offset,
      `read from ${from} skipped: record ${i} has offset ${record.offset}, expected ${offset}`,
    );
    const text = decode(record.data);
    const known = h.log.get(offset);
    if (known !== undefined) {
      h.check(
        text === known,
        `read from ${from}: offset ${offset} holds ${text}, the history committed ${known} there`,
      );
      return;
    }
    // The range is committed but its attempt's outcome is not known to the client yet.
    const seen = h.observed.get(offset);
    h.check(seen === undefined || seen === text, `offset ${offset} read as ${seen} earlier and as ${text} now`);
    const holder = h.pending().find((a) => a.records.includes(text));
    h.check(holder, `read from ${from}: offset ${offset} holds ${text}, which no committed or pending attempt holds`);
    h.observed.set(offset, text);
  });
}

/** A read whose error is allowed only as the trim it raced (or an injected fault). */
export function checkReadError(h: History, plan: ReadPlan, error: unknown, committedEndBefore: number): void {
  if (error === undefined) return;
  if (nameOf(error) === 'Stream.OffsetOutOfRange') {
    // The committed end only grows: refused means `from` was past it when the read began.
    h.check(
      plan.from > committedEndBefore,
      `read from ${plan.from} refused as out of range, but ${committedEndBefore} was committed before it: ${messageOf(error)}`,
    );
    return;
  }
  if (nameOf(error) === 'Stream.OffsetTrimmed') {
    h.check(
      plan.from < h.trim,
      `read from ${plan.from} refused as trimmed, but the trim offset is ${h.trim}: ${messageOf(error)}`,
    );
    return;
  }
  h.check(plan.fault !== undefined && TRANSIENT.has(nameOf(error)), `read from ${plan.from} threw ${messageOf(error)}`);
}
