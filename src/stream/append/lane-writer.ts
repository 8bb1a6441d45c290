import { randomUUID } from 'node:crypto';
import { attemptWindowOf, timeMarkSegment } from '../../domain/attempt-time.js';
import type { AppendOutcome, LaneHead, LaneRef } from '../../domain/stream.js';
import { rerunTransient } from '../../engine/rerun.js';
import type { Fence } from '../../ports/authority.js';
import type { Ports } from '../../ports/index.js';
import { commitAndSettle } from '../append-batch.js';
import { loadHead } from '../lane-store.js';
import { retireAttempt } from './retire-attempt.js';
import { writeWal, type WalWritten } from './write-wal.js';

export interface LaneWriterOptions {
  /** Batches in flight: WAL PUTs run up to `depth` ahead; head CASes stay strictly in order. Default 1. */
  depth?: number;
}

/**
 * The owner's append session on one lane: it carries what its last head CAS proved — the
 * head version and the committed end — so the acknowledged path of a batch is exactly one
 * WAL PUT and one head CAS transaction (two item writes), no read. It reloads the head only
 * when its knowledge is gone: the first batch, or after any batch that did not commit by
 * its own CAS (a CONFLICT, an unknown outcome, a refusal).
 *
 * Attempt ids are minted by the writer (`w<random writer id>.e<epoch>.t<ms>.<sequence>`,
 * the Kafka idempotent-producer idea: unique per writer, never reused), so nothing can exist
 * under them yet and the evidence check of a caller's id (one LIST and one GetItem,
 * appendBatch) is not needed. Each carries its time mark (`t` + the clock's unix ms when
 * minted: src/domain/attempt-time.ts), so past the lane's attempt window its re-runs are
 * refused and GC may retire its evidence. A caller may still pass its own id; the first PUT
 * then trusts it is fresh (an id outside the window is refused, nothing written).
 *
 * Pipelining (`depth` > 1): each batch is bound when its WAL object is written, to the end
 * of the batch before it. If a batch does not commit, the batches bound after it can never
 * commit at their starts (the committed end will not be their start, or not under this
 * head): each is spent (RetireAttempt: spent marker + head version bump) and reported
 * KNOWN_NOT_COMMITTED — never re-bound to a new offset. The caller re-appends their records
 * (a new attempt). Batches written after that bind to the reloaded committed end.
 */
export class LaneWriter {
  private readonly writerId = randomUUID().slice(0, 8);
  private sequence = 0;
  private head: { version: number; committedEnd: number; suspendedBy?: string } | undefined;
  /** The lane's attempt window, from its first head load (fixed at create). */
  private attemptWindowSeconds: number | undefined;
  /** Where the next batch binds; undefined until the head is known. */
  private nextStart: number | undefined;
  /** The CAS of the batch written last: the next CAS waits for it. */
  private tail: Promise<unknown> = Promise.resolve();
  private loading: Promise<LaneHead> | undefined;
  private inFlight = 0;
  private readonly waiting: Array<() => void> = [];
  private readonly depth: number;

  constructor(
    private readonly ports: Ports,
    readonly lane: LaneRef,
    private readonly session: Fence,
    options: LaneWriterOptions = {},
  ) {
    this.depth = Math.max(1, Math.floor(options.depth ?? 1));
  }

  /** Mints a fresh attempt id, time-marked with this moment on the ports' clock. */
  nextAttemptId(): string {
    return `w${this.writerId}.e${this.session.epoch}.${timeMarkSegment(this.ports.clock.now())}.${++this.sequence}`;
  }

  async append(records: readonly Uint8Array[], attemptId = this.nextAttemptId()): Promise<AppendOutcome> {
    await this.acquire();
    try {
      await this.ensureHead();
      const start = this.nextStart!;
      this.nextStart = start + records.length;
      const ref = { ...this.lane, attemptId, session: this.session };
      const encoded = records.map((r) => Buffer.from(r).toString('base64'));
      // The WAL PUT runs now (ahead of earlier CASes); the CAS joins the in-order chain.
      const known = { version: 0, start, attemptWindowSeconds: this.attemptWindowSeconds! };
      const put = rerunTransient((attempt) => writeWal({ ...ref, records: encoded }, this.ports, attempt === 1 ? known : undefined));
      const previous = this.tail;
      const cas = put.then(
        async (written) => {
          await previous.catch(() => undefined);
          return this.commit(written);
        },
        async (error: unknown) => {
          await previous.catch(() => undefined);
          this.forget();
          throw error;
        },
      );
      this.tail = cas;
      return await cas;
    } finally {
      this.release();
    }
  }

  /** One head CAS at the carried version; anything but our own APPLIED makes the writer reload. */
  private async commit(written: WalWritten): Promise<AppendOutcome> {
    await this.ensureHead();
    const head = this.head!;
    if (head.suspendedBy) {
      // Another attempt's outcome is unknown: the lane takes no append until it is resolved
      // (the version a CAS would carry includes the suspension, so the check is here).
      this.forget();
      return rerunTransient(() => retireAttempt({ ...written, reason: 'Stream.LaneSuspended' }, this.ports));
    }
    if (written.wal.start !== head.committedEnd || written.wal.fenceEpoch !== this.session.epoch) {
      // Bound behind a batch that did not commit: never its turn. Spend it (off the happy path).
      this.forget();
      return rerunTransient(() => retireAttempt({ ...written, reason: 'Stream.AttemptAborted' }, this.ports));
    }
    const outcome = await commitAndSettle({ ...written, expected: { version: head.version, attemptWindowSeconds: this.attemptWindowSeconds! } }, this.ports);
    const { headVersion, ...result } = outcome;
    if (outcome.status === 'KNOWN_COMMITTED' && headVersion !== undefined) this.head = { version: headVersion, committedEnd: outcome.end! };
    else this.forget();
    return result;
  }

  /** Loads the head once for everyone waiting on it. */
  private async ensureHead(): Promise<void> {
    if (this.head) return;
    this.loading ??= loadHead(this.ports, this.lane).finally(() => (this.loading = undefined));
    const head = await this.loading;
    if (this.head) return;
    this.head = { version: head.version, committedEnd: head.committedEnd, ...(head.suspendedBy ? { suspendedBy: head.suspendedBy } : {}) };
    this.attemptWindowSeconds = attemptWindowOf(head);
    // Batches not yet written bind to the reloaded end (ones already written keep their start).
    this.nextStart ??= head.committedEnd;
  }

  private forget(): void {
    this.head = undefined;
    this.nextStart = undefined;
  }

  private async acquire(): Promise<void> {
    if (this.inFlight >= this.depth) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.inFlight++;
  }

  private release(): void {
    this.inFlight--;
    this.waiting.shift()?.();
  }
}
