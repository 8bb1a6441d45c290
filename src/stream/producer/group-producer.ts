import { CutpointError } from '../../domain/errors.js';
import type { AppendOutcome, AppendStatus, LaneRef } from '../../domain/stream.js';
import type { Fence } from '../../domain/fence.js';
import type { Ports } from '../../ports/index.js';
import { appendBatch, type AppendBatchInput } from '../append-batch.js';
import { GroupAttemptIds } from './attempt-ids.js';
import { GroupBuffer, memberBytes, type PendingMember } from './group-buffer.js';
import { validateKnobs, type ProducerKnobs } from './knobs.js';
import { haltedOutcome, memberOutcomes, type MemberOutcome } from './member-outcome.js';

export type AppendFn = (batch: AppendBatchInput, ports: Ports) => Promise<AppendOutcome>;

/** One group as it ended (for progress and benches). */
export interface GroupReport {
  sequence: number;
  attemptId: string;
  members: number;
  records: number;
  /** Framed record bytes (the WAL object is these plus its header). */
  bytes: number;
  outcome: AppendStatus | 'ERROR';
  /** What the group's append threw (outcome ERROR); every member was rejected with it. */
  error?: unknown;
  start?: number;
  end?: number;
}

export interface ProducerOptions extends Partial<ProducerKnobs> {
  /** Group attempt ids are `<prefix>-g<n>`; default: derived from the session (see GroupAttemptIds). */
  attemptPrefix?: string;
  /** The append core; default `appendBatch`. */
  append?: AppendFn;
  onGroup?: (report: GroupReport) => void;
  /** Runs once `close()` has flushed every group (the pipelined producer closes its LaneWriter). */
  onClose?: () => Promise<unknown>;
  /** The LaneWriter the groups go through, if any: the id `stream resolve --writer` takes. */
  writerId?: string;
}

interface Ticket {
  resolve(outcome: MemberOutcome): void;
  reject(error: unknown): void;
}

/**
 * Group commit for one lane (WarpStream-like): batches appended concurrently wait up to
 * `lingerMs` (or until `maxBytes` / `maxRecords` are reached) and go out together as ONE
 * append (one WAL object, one head CAS) under one attempt id, members concatenated in
 * arrival order. Each member is answered only when its group's outcome is known, with
 * exactly that outcome (its own sub-range when committed). At most `maxInFlight` groups
 * run at once; `writable()` lets a fast writer wait instead of piling batches up.
 *
 * A group that ends without committing (or throws) halts the producer: later groups
 * would only fail on the same lane (fenced, suspended) and spend attempt ids, so batches
 * still waiting are answered KNOWN_NOT_COMMITTED (never sent) and so is every later
 * append. `close()` sends what waits and resolves when every group has ended.
 */
export class GroupProducer {
  private readonly knobs: ProducerKnobs;
  private readonly ids: GroupAttemptIds;
  private readonly buffer: GroupBuffer<Ticket>;
  private readonly appendFn: AppendFn;
  private nextSequence = 0;
  private inFlight = 0;
  private flushing = 0;
  private closed = false;
  private haltedBy: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  private timerDue: number | undefined;
  private waiters: Array<() => void> = [];

  constructor(
    private readonly lane: LaneRef,
    private readonly fence: Fence,
    private readonly ports: Ports,
    private readonly options: ProducerOptions = {},
  ) {
    this.knobs = validateKnobs(options);
    this.ids = new GroupAttemptIds(fence, options.attemptPrefix);
    this.buffer = new GroupBuffer(this.knobs);
    this.appendFn = options.append ?? appendBatch;
  }

  get attemptPrefix(): string {
    return this.ids.prefix;
  }

  /** The LaneWriter's id (pipelinedProducer): what `stream resolve --writer` takes if this process dies. */
  get writerId(): string | undefined {
    return this.options.writerId;
  }

  /** Why the producer stopped sending, once a group ended without committing. */
  get halted(): string | undefined {
    return this.haltedBy;
  }

  /** Appends one batch as a member of the next group; resolves with its group's exact outcome. */
  append(records: readonly Uint8Array[]): Promise<MemberOutcome> {
    if (this.closed)
      return Promise.reject(
        new CutpointError('Stream.ProducerClosed', 'stream.producer_closed', 'the producer is closed'),
      );
    let bytes: number;
    try {
      bytes = memberBytes(records);
    } catch (error) {
      return Promise.reject(error as Error);
    }
    if (this.haltedBy)
      return Promise.resolve(haltedOutcome(this.lane.stream, this.lane.partition, records.length, this.haltedBy));
    return new Promise((resolve, reject) => {
      const member: PendingMember<Ticket> = {
        records: [...records],
        bytes,
        arrivedAt: Date.now(),
        ticket: { resolve, reject },
      };
      this.buffer.push(member);
      this.pump();
    });
  }

  /** Resolves once fewer than a whole group's worth of batches wait (back-pressure for fast writers). */
  async writable(): Promise<void> {
    while (this.buffer.full()) await this.changed();
  }

  /** Sends everything waiting now and resolves when no group is in flight. */
  async flush(): Promise<void> {
    this.flushing++;
    try {
      this.pump();
      while (this.buffer.size > 0 || this.inFlight > 0) await this.changed();
    } finally {
      this.flushing--;
    }
  }

  /** Flushes, then refuses further appends (stream.producer_closed); then `onClose` (once). */
  async close(): Promise<void> {
    const first = !this.closed;
    this.closed = true;
    await this.flush();
    if (first) await this.options.onClose?.();
  }

  private changed(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  private notify(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }

  private due(): boolean {
    if (this.flushing > 0 || this.closed || this.buffer.full()) return true;
    const oldest = this.buffer.oldestArrival;
    return oldest !== undefined && Date.now() - oldest >= this.knobs.lingerMs;
  }

  private pump(): void {
    while (this.inFlight < this.knobs.maxInFlight && this.buffer.size > 0 && this.due())
      this.dispatch(this.buffer.take());
    // Not due yet: wake when the oldest waiting batch's linger ends (a group ending pumps too).
    const oldest = this.buffer.oldestArrival;
    const due =
      oldest !== undefined && this.inFlight < this.knobs.maxInFlight ? oldest + this.knobs.lingerMs : undefined;
    if (due !== this.timerDue) {
      if (this.timer) clearTimeout(this.timer);
      this.timer =
        due === undefined
          ? undefined
          : setTimeout(() => ((this.timerDue = undefined), this.pump()), Math.max(0, due - Date.now()));
      this.timerDue = due;
    }
    this.notify();
  }

  private dispatch(members: Array<PendingMember<Ticket>>): void {
    const sequence = this.nextSequence++;
    const attemptId = this.ids.of(sequence);
    const records = members.flatMap((m) => m.records);
    const bytes = members.reduce((sum, m) => sum + m.bytes, 0);
    const report = (
      outcome: GroupReport['outcome'],
      more?: Partial<Pick<GroupReport, 'attemptId' | 'start' | 'end' | 'error'>>,
    ) => {
      try {
        this.options.onGroup?.({
          sequence,
          attemptId,
          members: members.length,
          records: records.length,
          bytes,
          outcome,
          ...more,
        });
      } catch {
        // An observer that throws must not turn a known outcome into an unhandled rejection; it stops the producer.
        this.halt(`the onGroup observer failed on group ${attemptId}`);
      }
    };
    this.inFlight++;
    void this.appendFn({ ...this.lane, attemptId, session: this.fence, records }, this.ports)
      .then((outcome) => {
        const answers = memberOutcomes(
          outcome,
          sequence,
          members.map((m) => m.records.length),
        );
        if (outcome.status !== 'KNOWN_COMMITTED') this.halt(`group ${attemptId} ended ${outcome.status}`);
        members.forEach((m, i) => m.ticket.resolve(answers[i] as MemberOutcome));
        report(outcome.status, {
          attemptId: outcome.attemptId,
          ...(outcome.start !== undefined && { start: outcome.start }),
          ...(outcome.end !== undefined && { end: outcome.end }),
        });
      })
      .catch((error: unknown) => {
        this.halt(`group ${attemptId} failed: ${error instanceof CutpointError ? error.code : 'an unexpected error'}`);
        for (const m of members) m.ticket.reject(error);
        report('ERROR', { error });
      })
      .finally(() => {
        this.inFlight--;
        this.pump();
      });
  }

  private halt(why: string): void {
    this.haltedBy ??= why;
    for (const m of this.buffer.drain())
      m.ticket.resolve(haltedOutcome(this.lane.stream, this.lane.partition, m.records.length, this.haltedBy));
  }
}
