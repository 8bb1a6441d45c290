import { setTimeout as sleep } from 'node:timers/promises';
import { beforeAll, describe, it } from 'vitest';
import { FaultSwitch } from '../../src/adapters/fault-injector.js';
import { awsPorts } from '../../src/adapters/ports.js';
import type { CutpointConfig } from '../../src/config.js';
import { FAULT_KINDS } from '../../src/domain/faults.js';
import { laneKeys, type AppendOutcome, type CommitRecord, type LaneHead, type LaneRef } from '../../src/domain/stream.js';
import type { Fence } from '../../src/ports/authority.js';
import type { Ports } from '../../src/ports/index.js';
import { appendBatch } from '../../src/stream/append-batch.js';
import { createStream } from '../../src/stream/create-stream.js';
import { STREAM_CUT_POINTS } from '../../src/stream/cut-points.js';
import { readStream, type ReadResult } from '../../src/stream/read.js';
import { resolveAppend } from '../../src/stream/resolve.js';
import { takeoverLane } from '../../src/stream/takeover.js';
import { trimLane } from '../../src/stream/trim.js';
import { freshStores } from '../support/emulators.js';
import { Prng } from '../support/prng.js';
import { expectLaneInvariant } from '../support/stream-fixture.js';

/**
 * A seeded randomized history of one lane (seed 002, "Failure and recovery"): interleaved
 * appends by the owner and by stale writer sessions, faults at every append and
 * generation-0 cut point, lost client outcomes, MAY_HAVE_COMMITTED resolved now or later,
 * takeovers, trims and reads — through the in-process library (appendBatch, resolveAppend,
 * takeoverLane, trimLane, readStream), many steps per seed. After every step the history
 * is checked against a model and the durable commit chain:
 * - every attempt ends with exactly one final outcome: KNOWN_COMMITTED with a [start, end)
 *   that never changes across re-runs, or KNOWN_NOT_COMMITTED that never later commits;
 * - committed ranges are contiguous from 0 to the head's committed end, no gaps, no
 *   attempt (and no payload re-sent after KNOWN_NOT_COMMITTED) committed twice;
 * - the committed end and the trim offset never go backwards;
 * - while the lane is suspended nothing commits: appends come back KNOWN_NOT_COMMITTED,
 *   or MAY_HAVE_COMMITTED for the suspending attempt itself;
 * - reads return exactly the committed records in offset order from `from`, never skip,
 *   never stop early below the committed end, and refuse offsets below the trim.
 * An append that throws (a persistent fault outlasting the in-process reruns) is an
 * unknown client outcome: the model keeps the attempt open and later re-runs the same
 * attempt with the same records or resolves it — never a different attempt for them.
 * At the end every attempt is resolved, faults are off, and the lane invariant holds.
 *
 * Replay one seed: CUTPOINT_SEED=<n> npx vitest run test/faults/stream-history.random.test.ts
 * (CUTPOINT_STEPS=<n> lengthens the run; CUTPOINT_HISTORY_TRACE=1 prints every step).
 * Every failure names its seed, step and the last steps of the history. A seed fixes
 * every choice (operations, sessions, attempt ids, records, faults); only the "race" steps,
 * which run two or three operations at once, may interleave differently on a replay.
 * The seeds run concurrently, each on its own lane of one fresh table.
 */

const FILE = 'test/faults/stream-history.random.test.ts';
const DEFAULT_SEEDS = [11, 2024, 31337, 4096, 77, 9001];
const DEFAULT_STEPS = 40;
const STEPS = nonNegativeIntEnv('CUTPOINT_STEPS') ?? DEFAULT_STEPS;
const SEEDS = seedsFromEnv() ?? DEFAULT_SEEDS;
const TIMEOUT_MS = 240_000;
/** CUTPOINT_HISTORY_TRACE=1 prints every step of a passing run too (stderr). */
const TRACE = process.env.CUTPOINT_HISTORY_TRACE === '1';

function nonNegativeIntEnv(name: string): number | undefined {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return undefined;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer, got "${raw}"`);
  return n;
}

/** CUTPOINT_SEED=<n> replays one seed; a comma-separated list runs several. */
function seedsFromEnv(): number[] | undefined {
  const raw = process.env.CUTPOINT_SEED;
  if (raw === undefined || raw.trim() === '') return undefined;
  return raw.split(',').map((part) => {
    const n = Number(part.trim());
    if (part.trim() === '' || !Number.isSafeInteger(n) || n < 0) throw new Error(`CUTPOINT_SEED must be a non-negative integer (or a comma-separated list), got "${raw}"`);
    return n;
  });
}

const replayCommand = (seed: number): string =>
  `CUTPOINT_SEED=${seed}${STEPS === DEFAULT_STEPS ? '' : ` CUTPOINT_STEPS=${STEPS}`} npx vitest run ${FILE}`;

/** What may leave an in-process call when a fault outlasts its reruns: an unknown outcome. */
const TRANSIENT = new Set(['Cutpoint.OutcomeUnknown', 'Cutpoint.WorkerCrashed', 'Cutpoint.EffectFailed']);

/** Cut points an append reaches on its way (generation 0 and the index are off the acknowledged path). */
const APPEND_CUT_POINTS = [STREAM_CUT_POINTS.wal, STREAM_CUT_POINTS.headCas];
/** Cut points only recovery reaches (suspending the lane, spending an attempt). */
const RECOVERY_CUT_POINTS = [STREAM_CUT_POINTS.suspend, STREAM_CUT_POINTS.retire];
const RESOLVE_CUT_POINTS = [STREAM_CUT_POINTS.resolveFence, STREAM_CUT_POINTS.unsuspend];

/** One fault rule in the CUTPOINT_FAULTS grammar: once, from the second hit, or persistent. */
function randomRule(rng: Prng, cutPoints: readonly string[]): string {
  const cutPoint = rng.pick(cutPoints);
  const kind = rng.pick(FAULT_KINDS);
  const delay = kind === 'delay' ? `=${rng.int(2, 30)}` : '';
  const r = rng.next();
  const repeat = r < 0.2 ? '*' : r < 0.35 ? '@2' : '';
  return `${cutPoint}:${kind}${delay}${repeat}`;
}

/**
 * A fault for one append:
 * - head-CAS requests lost for good (the outcome stays unknown and it did not apply:
 *   MAY_HAVE_COMMITTED), sometimes with a second fault in the recovery it triggers;
 * - a persistent fault on the append's own path, which can outlast the in-process reruns
 *   (the call throws: an unknown client outcome);
 * - every response of an applied head CAS lost: commit#<end> proves it committed;
 * - otherwise one rule anywhere on the append's path, rarely in recovery alone.
 */
function appendFault(rng: Prng): string {
  const r = rng.next();
  if (r < 0.25) {
    const lost = `${STREAM_CUT_POINTS.headCas}:lose-request*`;
    return rng.chance(0.35) ? `${lost},${randomRule(rng, RECOVERY_CUT_POINTS)}` : lost;
  }
  if (r < 0.4) {
    const cutPoint = rng.pick([STREAM_CUT_POINTS.wal, STREAM_CUT_POINTS.headCas]);
    return `${cutPoint}:${rng.pick(['crash-before', 'crash-after', 'fail', 'lose-request', 'lose-response'])}*`;
  }
  if (r < 0.52) {
    // The CAS applies but every response is lost: commit#<end> proves it.
    return `${STREAM_CUT_POINTS.headCas}:lose-response*`;
  }
  return randomRule(rng, r < 0.92 ? APPEND_CUT_POINTS : RECOVERY_CUT_POINTS);
}

type Status = 'open' | 'may-have' | 'committed' | 'not-committed';

interface Attempt {
  id: string;
  writer: number;
  payload: number;
  records: string[];
  /** open: the client saw no outcome (the call threw); may-have: MAY_HAVE_COMMITTED. */
  status: Status;
  start?: number;
  end?: number;
  /** Step at which the final outcome was first reported, and by what. */
  settledAt?: number;
  settledHow?: string;
}

interface Writer {
  index: number;
  fence: Fence;
  ports: Ports;
  faults: FaultSwitch;
}

interface Operator {
  ports: Ports;
  faults: FaultSwitch;
}

class HistoryError extends Error {
  override name = 'HistoryError';
}

class History {
  readonly rng: Prng;
  step = 0;
  readonly trace: string[] = [];
  readonly attempts = new Map<string, Attempt>();
  /** offset → record, from KNOWN_COMMITTED outcomes. */
  readonly log = new Map<number, string>();
  /** offset → record a read returned before its attempt's outcome was known. */
  readonly observed = new Map<number, string>();
  /** Payloads whose attempt ended KNOWN_NOT_COMMITTED, for the client to send again. */
  readonly resend: number[] = [];
  readonly payloads = new Map<number, string[]>();
  readonly writers: Writer[] = [];
  owner = -1;
  /** The head as of the last durable check. */
  head: { committedEnd: number; trimOffset: number; suspendedBy?: string } = { committedEnd: 0, trimOffset: 0 };
  /** attemptId → range, from the commit records as of the last durable check. */
  durable = new Map<string, { start: number; end: number }>();
  /** The trim offset every successful trim call has moved the lane to. */
  trim = 0;
  suspendedSince = 0;
  private nextAttempt = 0;
  private nextPayload = 0;

  constructor(
    readonly seed: number,
    readonly lane: LaneRef,
    readonly config: CutpointConfig,
    readonly operator: Operator,
    readonly maxWriters: number,
  ) {
    this.rng = new Prng(seed);
  }

  where(): string {
    return `seed ${this.seed}, step ${this.step}`;
  }

  check(condition: unknown, message: string): asserts condition {
    if (!condition) throw new HistoryError(`[${this.where()}] ${message}`);
  }

  note(line: string): void {
    this.trace.push(`#${this.step} ${line}`);
  }

  newAttempt(writer: number, payload?: number): Attempt {
    const p = payload ?? this.nextPayload++;
    let records = this.payloads.get(p);
    if (!records) {
      const n = this.rng.int(1, 5);
      records = Array.from({ length: n }, (_, i) => `h${this.seed}.p${p}.r${i}`);
      this.payloads.set(p, records);
    }
    const attempt: Attempt = { id: `h${this.seed}-a${this.nextAttempt++}`, writer, payload: p, records, status: 'open' };
    this.attempts.set(attempt.id, attempt);
    return attempt;
  }

  pending(): Attempt[] {
    return [...this.attempts.values()].filter((a) => a.status === 'open' || a.status === 'may-have');
  }

  describeWriter(index: number): string {
    return `w${index}${index === this.owner ? '(owner)' : '(stale)'}`;
  }
}

const encode = (text: string): Uint8Array => new TextEncoder().encode(text);
const decode = (base64: string): string => Buffer.from(base64, 'base64').toString();
const nameOf = (error: unknown): string => (error instanceof Error ? error.name : String(error));
const messageOf = (error: unknown): string => (error instanceof Error ? `${error.name}: ${error.message}` : String(error));
const range = (o: { start?: number; end?: number }): string => `[${o.start}, ${o.end})`;

/** Applies one reported outcome of an attempt to the model, checking it against earlier ones. */
function settle(h: History, a: Attempt, o: AppendOutcome, via: string): void {
  h.check(o.attemptId === a.id, `${via} of ${a.id} answered for attempt ${o.attemptId}`);
  if (o.status === 'KNOWN_COMMITTED') {
    h.check(
      Number.isInteger(o.start) && Number.isInteger(o.end) && o.end! - o.start! === a.records.length,
      `${via}: ${a.id} KNOWN_COMMITTED with range ${range(o)} for ${a.records.length} records`,
    );
    if (a.status === 'committed') {
      h.check(a.start === o.start && a.end === o.end, `${a.id} was KNOWN_COMMITTED ${range(a)} at step ${a.settledAt}; ${via} now says ${range(o)}`);
      return;
    }
    h.check(
      a.status !== 'not-committed',
      `${a.id} was KNOWN_NOT_COMMITTED at step ${a.settledAt} (${a.settledHow}); ${via} now says KNOWN_COMMITTED ${range(o)}`,
    );
    for (let i = 0; i < a.records.length; i++) {
      const offset = o.start! + i;
      const record = a.records[i]!;
      const existing = h.log.get(offset);
      h.check(existing === undefined, `offset ${offset} committed twice: ${existing} and ${record} (${a.id} ${range(o)})`);
      const seen = h.observed.get(offset);
      h.check(seen === undefined || seen === record, `a read returned ${seen} at offset ${offset}, but ${a.id} committed ${record} there`);
      h.log.set(offset, record);
      h.observed.delete(offset);
    }
    Object.assign(a, { status: 'committed', start: o.start, end: o.end, settledAt: h.step, settledHow: via });
  } else if (o.status === 'KNOWN_NOT_COMMITTED') {
    h.check(a.status !== 'committed', `${a.id} was KNOWN_COMMITTED ${range(a)} at step ${a.settledAt}; ${via} now says KNOWN_NOT_COMMITTED (${o.reason})`);
    if (a.status === 'not-committed') return;
    Object.assign(a, { status: 'not-committed', settledAt: h.step, settledHow: `${via}: ${o.reason}` });
    // "A new attempt is safe": the client may send the same payload again, new attempt id.
    if (h.rng.chance(0.5)) h.resend.push(a.payload);
  } else {
    h.check(
      a.status === 'open' || a.status === 'may-have',
      `${a.id} had the final outcome ${a.status} at step ${a.settledAt} (${a.settledHow}); ${via} now says MAY_HAVE_COMMITTED`,
    );
    a.status = 'may-have';
  }
}

interface StepContext {
  /** The attempt suspending the lane when the step began. */
  suspendedBy?: string;
  /** Attempts with a commit record when the step began. */
  committedBefore: ReadonlySet<string>;
}

async function append(h: History, a: Attempt, ctx: StepContext, fault?: string): Promise<AppendOutcome | undefined> {
  const w = h.writers[a.writer]!;
  const who = h.describeWriter(a.writer);
  const injector = fault ? w.faults.arm(fault) : undefined;
  let outcome: AppendOutcome | undefined;
  let thrown: unknown;
  try {
    outcome = await appendBatch({ ...h.lane, attemptId: a.id, session: w.fence, records: a.records.map(encode) }, w.ports);
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
  h.note(`${head} → ${outcome!.status}${outcome!.start === undefined ? '' : ` ${range(outcome!)}`}${outcome!.reason ? ` (${outcome!.reason})` : ''}${outcome!.pendingRepairs ? ` repairs pending: ${outcome!.pendingRepairs.join(',')}` : ''}`);
  if (ctx.suspendedBy) {
    const ok =
      outcome!.status === 'KNOWN_NOT_COMMITTED' ||
      (outcome!.status === 'MAY_HAVE_COMMITTED' && a.id === ctx.suspendedBy) ||
      (outcome!.status === 'KNOWN_COMMITTED' && ctx.committedBefore.has(a.id));
    h.check(ok, `the lane was suspended by ${ctx.suspendedBy}, yet append ${a.id} came back ${outcome!.status} ${range(outcome!)}`);
  }
  settle(h, a, outcome!, 'append');
  return outcome;
}

async function resolve(h: History, a: Attempt, fault?: string): Promise<void> {
  const injector = fault ? h.operator.faults.arm(fault) : undefined;
  try {
    const result = await resolveAppend({ ...h.lane, attemptId: a.id }, h.operator.ports);
    h.note(`resolve ${a.id} (was ${a.status})${fault ? ` [${fault}]` : ''} → ${result.status}${result.start === undefined ? '' : ` ${range(result)}`}${result.unsuspended ? ', lane released' : ''}`);
    settle(h, a, result, 'resolve');
  } catch (error) {
    h.note(`resolve ${a.id}${fault ? ` [${fault}, fired ${injector?.fired.length}]` : ''} → threw ${messageOf(error)}`);
    h.check(fault !== undefined && TRANSIENT.has(nameOf(error)), `resolve ${a.id} threw ${messageOf(error)}`);
  } finally {
    if (injector) h.operator.faults.disarm();
  }
}

async function takeover(h: History, fault?: string): Promise<void> {
  const index = h.writers.length;
  const session = `history-${h.seed}-writer-${index}-session`;
  const faults = new FaultSwitch();
  const ports = awsPorts(h.config, faults);
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
  h.check(result.owner === input.owner && !('session' in result), `takeover w${index} came back as ${JSON.stringify(result)}`);
  h.check(result.epoch === previousEpoch + 1, `takeover w${index}: epoch ${result.epoch} after ${previousEpoch}`);
  const fence = { owner: input.owner, session, epoch: result.epoch };
  h.writers.push({ index, fence, ports, faults });
  h.owner = index;
  h.note(`takeover → w${index} owns the lane at epoch ${result.epoch}${fault ? ` [${fault}]` : ''}`);
}

async function trim(h: History, to: number, fault?: string): Promise<void> {
  const before = h.trim;
  if (fault) h.operator.faults.arm(fault);
  let result;
  try {
    result = await trimLane({ ...h.lane, to }, h.operator.ports);
  } catch (error) {
    if (nameOf(error) === 'Stream.TrimBackwards') {
      h.note(`trim to ${to} → refused: ${messageOf(error)}`);
      h.check(to < h.trim, `trim to ${to} was refused as backwards, but the trim offset is ${h.trim}`);
      return;
    }
    h.note(`trim to ${to} [${fault}] → threw ${messageOf(error)}; again`);
    h.check(fault !== undefined && TRANSIENT.has(nameOf(error)), `trim to ${to} threw ${messageOf(error)}`);
    h.operator.faults.disarm();
    result = await trimLane({ ...h.lane, to }, h.operator.ports);
  } finally {
    h.operator.faults.disarm();
  }
  h.check(to >= before, `trim to ${to} below the trim offset ${before} succeeded (now ${result.trimOffset})`);
  h.check(result.trimOffset === to, `trim to ${to} left the trim offset at ${result.trimOffset}`);
  h.trim = Math.max(h.trim, result.trimOffset);
  h.note(`trim to ${to}${fault ? ` [${fault}]` : ''} → trim offset ${result.trimOffset} (was ${result.previousTrimOffset})`);
}

interface ReadPlan {
  from: number;
  maxRecords?: number;
  fault?: string;
}

/** Runs one read; returns the error if it threw (the caller decides whether that is allowed). */
async function read(h: History, plan: ReadPlan, committedEndBefore: number): Promise<unknown> {
  if (plan.fault) h.operator.faults.arm(plan.fault);
  let result: ReadResult;
  try {
    result = await readStream({ ...h.lane, from: plan.from, ...(plan.maxRecords === undefined ? {} : { maxRecords: plan.maxRecords }) }, h.operator.ports);
  } catch (error) {
    h.note(`read from ${plan.from}${plan.fault ? ` [${plan.fault}]` : ''} → threw ${messageOf(error)}`);
    return error;
  } finally {
    if (plan.fault) h.operator.faults.disarm();
  }
  h.note(
    `read from ${plan.from} max ${plan.maxRecords ?? 'default'}${plan.fault ? ` [${plan.fault}]` : ''} → ${result.records.length} records, next ${result.next}, ` +
      `end ${result.committedEnd}, trim ${result.trimOffset}${result.repairs.length ? `, ${result.repairs.length} index repairs` : ''}`,
  );
  verifyRead(h, plan, result, committedEndBefore);
  return undefined;
}

function verifyRead(h: History, plan: ReadPlan, result: ReadResult, committedEndBefore: number): void {
  const { from } = plan;
  const max = plan.maxRecords ?? 100;
  const n = result.records.length;
  h.check(result.from === from, `read from ${from} answered from ${result.from}`);
  h.check(result.trimOffset <= from, `read from ${from} succeeded below its own trim offset ${result.trimOffset}`);
  h.check(result.committedEnd >= committedEndBefore, `read saw committed end ${result.committedEnd}, behind ${committedEndBefore} seen earlier`);
  h.check(result.next === from + n, `read from ${from}: next ${result.next} after ${n} records`);
  h.check(result.next <= result.committedEnd, `read from ${from}: next ${result.next} past the committed end ${result.committedEnd}`);
  // Below the committed end a read is never EOF and never short (records are tiny here).
  const expected = Math.max(0, Math.min(max, result.committedEnd - from));
  h.check(n === expected || result.repairs.length >= 64, `read from ${from} (max ${max}) returned ${n} records of [${from}, ${result.committedEnd})`);
  result.records.forEach((record, i) => {
    const offset = from + i;
    h.check(record.offset === offset, `read from ${from} skipped: record ${i} has offset ${record.offset}, expected ${offset}`);
    const text = decode(record.data);
    const known = h.log.get(offset);
    if (known !== undefined) {
      h.check(text === known, `read from ${from}: offset ${offset} holds ${text}, the history committed ${known} there`);
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

/** After every step: the head and the commit chain against the model. */
async function checkDurable(h: History, ctx?: StepContext): Promise<void> {
  const head = (await h.operator.ports.authority.get(laneKeys.head(h.lane))) as unknown as LaneHead;
  h.check(head.committedEnd >= h.head.committedEnd, `committed end went backwards: ${h.head.committedEnd} → ${head.committedEnd}`);
  h.check(head.trimOffset >= h.head.trimOffset, `trim offset went backwards: ${h.head.trimOffset} → ${head.trimOffset}`);
  h.check(head.trimOffset === h.trim, `trim offset is ${head.trimOffset}, the trims called moved it to ${h.trim}`);
  h.check(head.trimOffset <= head.committedEnd, `trim offset ${head.trimOffset} past the committed end ${head.committedEnd}`);
  if (ctx?.suspendedBy) {
    h.check(head.committedEnd === h.head.committedEnd, `the lane was suspended by ${ctx.suspendedBy}, yet the committed end moved ${h.head.committedEnd} → ${head.committedEnd}`);
  }

  const commits = (await h.operator.ports.authority.query(laneKeys.pk(h.lane), 'commit#')) as unknown as CommitRecord[];
  const durable = new Map<string, { start: number; end: number }>();
  const payloadBy = new Map<number, string>();
  let expectedStart = 0;
  for (const c of commits) {
    h.check(c.start === expectedStart, `commit chain: ${c.attemptId} ${range(c)} where ${expectedStart} was next (gap or overlap)`);
    h.check(c.end > c.start, `commit chain: empty range ${range(c)} for ${c.attemptId}`);
    expectedStart = c.end;
    const a = h.attempts.get(c.attemptId);
    h.check(a, `commit chain names ${c.attemptId}, which this history never started`);
    h.check(c.end - c.start === a.records.length, `commit ${a.id} ${range(c)} for ${a.records.length} records`);
    h.check(!durable.has(a.id), `${a.id} committed twice`);
    h.check(a.status !== 'not-committed', `${a.id} was reported KNOWN_NOT_COMMITTED at step ${a.settledAt} (${a.settledHow}), but the lane holds its commit ${range(c)}`);
    if (a.status === 'committed') h.check(a.start === c.start && a.end === c.end, `${a.id} reported ${range(a)}, committed ${range(c)}`);
    const other = payloadBy.get(a.payload);
    h.check(other === undefined, `payload p${a.payload} committed twice: by ${other} and by ${a.id} (re-sent after KNOWN_NOT_COMMITTED)`);
    payloadBy.set(a.payload, a.id);
    durable.set(a.id, { start: c.start, end: c.end });
  }
  h.check(expectedStart === head.committedEnd, `commit chain ends at ${expectedStart}, the head at ${head.committedEnd}`);
  for (const a of h.attempts.values()) {
    if (a.status === 'committed') h.check(durable.has(a.id), `${a.id} reported KNOWN_COMMITTED ${range(a)} has no commit record`);
  }
  if (head.suspendedBy) {
    const a = h.attempts.get(head.suspendedBy);
    h.check(a && a.status !== 'committed', `the lane is suspended by ${head.suspendedBy} (${a?.status ?? 'unknown attempt'})`);
    if (!h.head.suspendedBy) h.suspendedSince = h.step;
  }
  h.head = { committedEnd: head.committedEnd, trimOffset: head.trimOffset, ...(head.suspendedBy ? { suspendedBy: head.suspendedBy } : {}) };
  h.durable = durable;
}

function contextOf(h: History): StepContext {
  return { ...(h.head.suspendedBy ? { suspendedBy: h.head.suspendedBy } : {}), committedBefore: new Set(h.durable.keys()) };
}

function pickWriter(h: History): number {
  const stale = h.writers.map((w) => w.index).filter((i) => i !== h.owner);
  return stale.length && h.rng.chance(0.25) ? h.rng.pick(stale) : h.owner;
}

function newPayloadAttempt(h: History, writer: number): Attempt {
  const payload = h.resend.length && h.rng.chance(0.35) ? h.resend.shift() : undefined;
  return h.newAttempt(writer, payload);
}

function readPlan(h: History): ReadPlan {
  const { trimOffset, committedEnd } = h.head;
  const r = h.rng.next();
  const from = r < 0.08 && trimOffset > 0 ? h.rng.int(0, trimOffset - 1) : r < 0.13 ? committedEnd + h.rng.int(0, 3) : r < 0.35 ? trimOffset : h.rng.int(trimOffset, committedEnd);
  const maxRecords = h.rng.chance(0.3) ? undefined : h.rng.int(1, 40);
  const fault = h.rng.chance(0.15) ? randomRule(h.rng, [STREAM_CUT_POINTS.indexRepair]) : undefined;
  return { from, ...(maxRecords === undefined ? {} : { maxRecords }), ...(fault ? { fault } : {}) };
}

function trimTarget(h: History): number {
  const { committedEnd } = h.head;
  const r = h.rng.next();
  if (r < 0.1 && h.trim > 0) return h.rng.int(0, h.trim - 1); // refused: the trim never moves back
  if (r < 0.2) return h.trim; // the same target again is success
  return h.trim + Math.floor((committedEnd - h.trim) * h.rng.next() * 0.5);
}

function trimFault(h: History): string | undefined {
  if (!h.rng.chance(0.4)) return undefined;
  return h.rng.chance(0.7) ? `${STREAM_CUT_POINTS.trimCas}:lose-response` : randomRule(h.rng, [STREAM_CUT_POINTS.trimCas]);
}

/** A read whose error is allowed only as the trim it raced (or an injected fault). */
function checkReadError(h: History, plan: ReadPlan, error: unknown, committedEndBefore: number): void {
  if (error === undefined) return;
  if (nameOf(error) === 'Stream.OffsetOutOfRange') {
    // The committed end only grows: refused means `from` was past it when the read began.
    h.check(plan.from > committedEndBefore, `read from ${plan.from} refused as out of range, but ${committedEndBefore} was committed before it: ${messageOf(error)}`);
    return;
  }
  if (nameOf(error) === 'Stream.OffsetTrimmed') {
    h.check(plan.from < h.trim, `read from ${plan.from} refused as trimmed, but the trim offset is ${h.trim}: ${messageOf(error)}`);
    return;
  }
  h.check(plan.fault !== undefined && TRANSIENT.has(nameOf(error)), `read from ${plan.from} threw ${messageOf(error)}`);
}

type StepKind = 'append' | 'rerun' | 'resolve' | 'takeover' | 'trim' | 'read' | 'race';

async function runStep(h: History, ctx: StepContext): Promise<void> {
  const pending = h.pending();
  const suspended = h.head.suspendedBy;
  const stuck = suspended !== undefined && h.step - h.suspendedSince >= 6;
  const kind: StepKind = stuck
    ? 'resolve'
    : h.rng.weighted<StepKind>({
        append: 32,
        rerun: h.attempts.size ? 10 : 0,
        resolve: pending.length || suspended ? 10 : 0,
        takeover: h.writers.length < h.maxWriters ? 3 : 0,
        trim: 6,
        read: 16,
        race: 9,
      });
  h.note(`— ${kind}${suspended ? ` (lane suspended by ${suspended})` : ''}`);

  switch (kind) {
    case 'append': {
      const a = newPayloadAttempt(h, pickWriter(h));
      const fault = h.rng.chance(0.35) ? appendFault(h.rng) : undefined;
      const outcome = await append(h, a, ctx, fault);
      // MAY_HAVE_COMMITTED: resolve the original attempt now, or a few steps later.
      if (outcome?.status === 'MAY_HAVE_COMMITTED' && h.rng.chance(0.4)) await resolve(h, a);
      return;
    }
    case 'rerun': {
      // The same attempt id with its same records: an open one, a recent one (a client
      // retrying), or any earlier one — whatever its outcome was, it must not change.
      const all = [...h.attempts.values()];
      const a = pending.length && h.rng.chance(0.5) ? h.rng.pick(pending) : h.rng.chance(0.7) ? h.rng.pick(all.slice(-8)) : h.rng.pick(all);
      const fault = h.rng.chance(0.3) ? appendFault(h.rng) : undefined;
      await append(h, a, ctx, fault);
      return;
    }
    case 'resolve': {
      const holder = suspended ? h.attempts.get(suspended) : undefined;
      const a = holder && (pending.length === 0 || stuck || h.rng.chance(0.75)) ? holder : h.rng.pick(pending);
      const fault = !stuck && h.rng.chance(0.25) ? randomRule(h.rng, RESOLVE_CUT_POINTS) : undefined;
      if (a.status === 'open' && a !== holder && h.rng.chance(0.5)) await append(h, a, ctx, fault && appendFault(h.rng));
      else await resolve(h, a, fault);
      return;
    }
    case 'takeover':
      await takeover(h, h.rng.chance(0.3) ? randomRule(h.rng, [STREAM_CUT_POINTS.takeoverCas]) : undefined);
      return;
    case 'trim':
      await trim(h, trimTarget(h), trimFault(h));
      return;
    case 'read': {
      const plan = readPlan(h);
      const committedEnd = h.head.committedEnd;
      checkReadError(h, plan, await read(h, plan, committedEnd), committedEnd);
      return;
    }
    case 'race':
      await race(h, ctx);
      return;
  }
}

/** Two or three operations in flight at once on the same lane. */
async function race(h: History, ctx: StepContext): Promise<void> {
  const stale = h.writers.map((w) => w.index).filter((i) => i !== h.owner);
  const variants = ['owner-pair', 'mixed', ...(h.writers.length < h.maxWriters ? ['stale-writer'] : []), ...(stale.length ? ['stale-vs-owner'] : [])];
  const variant = h.rng.pick(variants);
  h.note(`  race: ${variant}`);
  switch (variant) {
    case 'stale-writer': {
      // The owner is slow inside its append while a new session takes the lane over:
      // the old owner's bytes may land, its head CAS must not.
      const a = newPayloadAttempt(h, h.owner);
      const slowAt = h.rng.pick([STREAM_CUT_POINTS.wal, STREAM_CUT_POINTS.headCas]);
      const fault = `${slowAt}:delay=${h.rng.int(60, 150)}`;
      const pause = h.rng.int(0, 50);
      await Promise.all([append(h, a, ctx, fault), sleep(pause).then(() => takeover(h))]);
      return;
    }
    case 'owner-pair': {
      const a = newPayloadAttempt(h, h.owner);
      const b = newPayloadAttempt(h, h.owner);
      await Promise.all([append(h, a, ctx), append(h, b, ctx)]);
      return;
    }
    case 'stale-vs-owner': {
      const a = newPayloadAttempt(h, h.owner);
      const b = newPayloadAttempt(h, h.rng.pick(stale));
      await Promise.all([append(h, a, ctx), append(h, b, ctx)]);
      return;
    }
    default: {
      // An append, a read and a trim at once.
      const a = newPayloadAttempt(h, h.owner);
      const plan = readPlan(h);
      const to = h.trim + Math.floor((h.head.committedEnd - h.trim) * h.rng.next() * 0.3);
      const committedEnd = h.head.committedEnd;
      const [, readError] = await Promise.all([append(h, a, ctx), read(h, { ...plan, fault: undefined }, committedEnd), trim(h, to)]);
      checkReadError(h, { ...plan, fault: undefined }, readError, committedEnd);
    }
  }
}

/** Faults off; every open attempt re-run or resolved, the lane released; then the full checks. */
async function settleEverything(h: History): Promise<void> {
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
  h.check(h.pending().length === 0, `attempts still without a final outcome: ${h.pending().map((a) => `${a.id} (${a.status})`).join(', ')}`);
  h.check(!h.head.suspendedBy, `the lane is still suspended by ${h.head.suspendedBy}`);
  for (const a of h.attempts.values()) h.check(a.status === 'committed' || a.status === 'not-committed', `${a.id} ended ${a.status}`);

  // Every committed record from the trim on, page by page, exactly as the history says.
  const { trimOffset, committedEnd } = h.head;
  for (let offset = trimOffset; offset < committedEnd; offset++) h.check(h.log.has(offset), `offset ${offset} is committed but no attempt reported it`);
  h.check(h.observed.size === 0, `reads returned records no attempt ended up committing: offsets ${[...h.observed.keys()].join(', ')}`);
  for (let from = trimOffset; from < committedEnd; ) {
    const plan = { from, maxRecords: h.rng.int(7, 60) };
    const error = await read(h, plan, committedEnd);
    h.check(error === undefined, `final read from ${from} threw ${messageOf(error)}`);
    from = Math.min(committedEnd, from + plan.maxRecords);
  }
  const acknowledged = [...h.attempts.values()]
    .filter((a) => a.status === 'committed')
    .sort((x, y) => x.start! - y.start!)
    .map((a) => ({ attemptId: a.id, records: a.records }));
  await expectLaneInvariant(h.operator.ports, h.lane, acknowledged);
}

async function runHistory(h: History): Promise<void> {
  await createStream({ stream: h.lane.stream, partitions: 1 }, h.operator.ports);
  await takeover(h);
  await checkDurable(h);
  for (h.step = 1; h.step <= STEPS; h.step++) {
    // Nothing a step does while the lane is suspended may commit (a resolve never does).
    const ctx = contextOf(h);
    await runStep(h, ctx);
    await checkDurable(h, ctx);
  }
  h.step = STEPS;
  await settleEverything(h);
}

let config: CutpointConfig;
beforeAll(async () => {
  config = (await freshStores()).config;
});

describe(`randomized stream history (${STEPS} steps per seed; replay one seed with CUTPOINT_SEED=<n>)`, () => {
  for (const seed of SEEDS) {
    it.concurrent(
      `seed ${seed} — replay: ${replayCommand(seed)}`,
      async () => {
        const faults = new FaultSwitch();
        const operator: Operator = { ports: awsPorts(config, faults), faults };
        const h = new History(seed, { stream: `hist-${seed}`, partition: 0 }, config, operator, 2 + (seed % 2));
        try {
          await runHistory(h);
          if (TRACE) process.stderr.write(`seed ${seed}:\n  ${h.trace.join('\n  ')}\n`);
        } catch (error) {
          const message = error instanceof HistoryError ? error.message : `[${h.where()}] ${messageOf(error)}`;
          throw new Error(`${message}\n  replay: ${replayCommand(seed)}\n  last steps:\n    ${h.trace.slice(-40).join('\n    ')}`, { cause: error });
        }
      },
      TIMEOUT_MS,
    );
  }
});
