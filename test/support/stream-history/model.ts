import type { CutpointConfig } from '../../../src/config.js';
import type { AppendOutcome, LaneRef } from '../../../src/domain/stream.js';
import type { FaultSwitch } from '../../../src/adapters/fault-injector.js';
import type { Fence } from '../../../src/domain/fence.js';
import type { Ports } from '../../../src/ports/index.js';
import type { MovableClock } from '../../faults/stream-gc-world.js';
import { Prng } from '../prng.js';

/**
 * The model of one randomized stream history (test/faults/stream-history.random.test.ts):
 * what the clients were told (attempts and their outcomes), what the history committed
 * (offset → record), what was durable at the last check, and the lifecycle actors' state
 * (compaction, GC, one consumer group). `settle` applies one reported append outcome and
 * checks it against every earlier one.
 */

/** What may leave an in-process call when a fault outlasts its reruns: an unknown outcome. */
export const TRANSIENT = new Set(['Cutpoint.OutcomeUnknown', 'Cutpoint.WorkerCrashed', 'Cutpoint.EffectFailed']);

export type Status = 'open' | 'may-have' | 'committed' | 'not-committed';

export interface Attempt {
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

export interface Writer {
  index: number;
  fence: Fence;
  ports: Ports;
  faults: FaultSwitch;
}

export interface Operator {
  ports: Ports;
  faults: FaultSwitch;
}

/** A consumer of the history's one group: a cursor owner session. */
export interface Consumer {
  index: number;
  fence: Fence;
}

/** What the lifecycle actors share: one movable clock, the DELETEs that applied, the reader's own ports. */
export interface LifecycleActors {
  /** Every port of the history runs on it: GC grace, leases and orphan ages read it. */
  clock: MovableClock;
  /** Applied DELETEs per object key (GC runs on the operator's counting ports). */
  deletes: Map<string, number>;
  /** Lives (root epochs) of the lifecycle roots GC retired, per object key (the same counting ports). */
  retiredLives: Map<string, number>;
  /** Reads and consumers run on their own ports and fault switch, beside the operator's GC. */
  reader: Operator;
  graceSeconds: number;
}

export class HistoryError extends Error {
  override name = 'HistoryError';
}

export class History {
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
  /** The consumer group every consume step commits for; whether the retention policy names it. */
  readonly group: string;
  policy = false;
  readonly consumers: Consumer[] = [];
  consumer = -1;
  /** The group's durable cursor as of the last check (absent before the first takeover). */
  cursor?: { position: number; epoch: number };
  /** The step of the last seek (a seek is the one way a cursor moves back). */
  seekedAt = -1;
  /** Successful compactions and GC runs, for the summary line. */
  compactions = 0;
  gcRuns = 0;
  private nextAttempt = 0;
  private nextPayload = 0;

  constructor(
    readonly seed: number,
    readonly lane: LaneRef,
    readonly config: CutpointConfig,
    readonly operator: Operator,
    readonly maxWriters: number,
    readonly actors: LifecycleActors,
  ) {
    this.rng = new Prng(seed);
    this.group = `hist-${seed}`;
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
    const attempt: Attempt = {
      id: `h${this.seed}-a${this.nextAttempt++}`,
      writer,
      payload: p,
      records,
      status: 'open',
    };
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

export const encode = (text: string): Uint8Array => new TextEncoder().encode(text);
export const decode = (base64: string): string => Buffer.from(base64, 'base64').toString();
export const nameOf = (error: unknown): string => (error instanceof Error ? error.name : String(error));
export const messageOf = (error: unknown): string =>
  error instanceof Error ? `${error.name}: ${error.message}` : String(error);
export const range = (o: { start?: number; end?: number }): string => `[${o.start}, ${o.end})`;

/** Applies one reported outcome of an attempt to the model, checking it against earlier ones. */
export function settle(h: History, a: Attempt, o: AppendOutcome, via: string): void {
  h.check(o.attemptId === a.id, `${via} of ${a.id} answered for attempt ${o.attemptId}`);
  if (o.status === 'KNOWN_COMMITTED') {
    h.check(
      Number.isInteger(o.start) && Number.isInteger(o.end) && o.end! - o.start! === a.records.length,
      `${via}: ${a.id} KNOWN_COMMITTED with range ${range(o)} for ${a.records.length} records`,
    );
    if (a.status === 'committed') {
      h.check(
        a.start === o.start && a.end === o.end,
        `${a.id} was KNOWN_COMMITTED ${range(a)} at step ${a.settledAt}; ${via} now says ${range(o)}`,
      );
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
      h.check(
        existing === undefined,
        `offset ${offset} committed twice: ${existing} and ${record} (${a.id} ${range(o)})`,
      );
      const seen = h.observed.get(offset);
      h.check(
        seen === undefined || seen === record,
        `a read returned ${seen} at offset ${offset}, but ${a.id} committed ${record} there`,
      );
      h.log.set(offset, record);
      h.observed.delete(offset);
    }
    Object.assign(a, { status: 'committed', start: o.start, end: o.end, settledAt: h.step, settledHow: via });
  } else if (o.status === 'KNOWN_NOT_COMMITTED') {
    h.check(
      a.status !== 'committed',
      `${a.id} was KNOWN_COMMITTED ${range(a)} at step ${a.settledAt}; ${via} now says KNOWN_NOT_COMMITTED (${o.reason})`,
    );
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
