import { randomUUID } from 'node:crypto';
import { CutpointError, ValidationError } from '../../domain/errors.js';
import { attemptWindowOf, timeMarkSegment } from '../../domain/attempt-time.js';
import type { AppendOutcome, LaneHead, LaneRef } from '../../domain/stream.js';
import { LaneSuspendedError } from '../../domain/stream-errors.js';
import { rerunTransient } from '../../engine/rerun.js';
import type { Fence } from '../../domain/fence.js';
import type { Ports } from '../../ports/index.js';
import { commitAndSettle } from '../append-batch.js';
import { uncommittedOutcome } from '../outcomes.js';
import { retireAttempt } from './retire-attempt.js';
import { claimWriterSlot, holdsSlot, releaseWriterSlot, writerAttemptPrefix } from './writer-slot.js';
import { writeWal, type WalWritten } from './write-wal.js';

export interface LaneWriterOptions {
  /** Batches in flight: WAL PUTs run up to `depth` ahead; head CASes stay strictly in order. Default 1. */
  depth?: number;
}

/** What `close()` left: the slot released, or the attempts whose outcome this writer never learned (resolve them). */
export interface WriterClosed {
  released: boolean;
  /** Attempts whose head CAS may have gone out and whose append threw: `stream resolve --writer` settles them. */
  unsettled: string[];
}

interface CarriedHead {
  version: number;
  committedEnd: number;
  suspendedBy?: string;
  /** Another writer's slot (or this one's, being resolved) holds the lane: nothing is appended. */
  heldBy?: string;
  /** The head names this writer: its lean CASes may go out. */
  mine: boolean;
}

/**
 * The owner's append session on one lane: it carries what its last head CAS proved — the
 * head version and the committed end — so the acknowledged path of a batch is exactly one
 * WAL PUT and one head CAS transaction (two item writes), no read. It reloads the head only
 * when its knowledge is gone: the first batch, or after any batch that did not commit by
 * its own CAS (a CONFLICT, an unknown outcome, a refusal).
 *
 * Attempt ids are minted by the writer (`w<writer id>.e<epoch>.t<ms>.<sequence>`, the Kafka
 * idempotent-producer idea: unique per writer, never reused), so nothing can exist under
 * them yet and the evidence check of a caller's id (one LIST and one GetItem, appendBatch)
 * is not needed. Each carries its time mark (`t` + the clock's unix ms when minted:
 * src/domain/attempt-time.ts), so past the lane's attempt window its re-runs are refused
 * and GC may retire its evidence. A caller may pass an id it took from `nextAttemptId()`
 * (to know it before the outcome); any other id is refused, so one LIST of `w<writer id>.`
 * finds them all.
 *
 * The writer slot (writer-slot.ts): the first head load claims the lane for this writer
 * (one conditional write per writer, not per batch) and `close()` releases it (one more).
 * In between every append of another writer is refused (Stream.LaneSuspended, naming this
 * writer), so if this process dies with a head CAS outcome unknown — before SuspendLane
 * could record it — the lane stays held until `stream resolve --writer <writerId>` has
 * settled every attempt of it. A writer that finds the lane held by another writer appends
 * nothing (KNOWN_NOT_COMMITTED, Stream.LaneSuspended, no WAL object written).
 *
 * Pipelining (`depth` > 1): each batch is bound when its WAL object is written, to the end
 * of the batch before it. If a batch does not commit, the batches bound after it can never
 * commit at their starts (the committed end will not be their start, or not under this
 * head): each is spent (RetireAttempt: spent marker + head version bump) and reported
 * KNOWN_NOT_COMMITTED — never re-bound to a new offset. The caller re-appends their records
 * (a new attempt). Batches written after that bind to the reloaded committed end.
 */
export class LaneWriter {
  /** The id its attempt ids carry and `stream resolve --writer` takes (8 hex digits). */
  readonly writerId = randomUUID().replace(/-/g, '').slice(0, 8);
  private sequence = 0;
  private head: CarriedHead | undefined;
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
  /** Appends not yet answered (close() waits for them). */
  private readonly pending = new Set<Promise<unknown>>();
  private readonly unsettled = new Set<string>();
  /** A claim was sent at least once (it may have landed even if its answer was lost). */
  private claimSent = false;
  private closed = false;

  constructor(
    private readonly ports: Ports,
    readonly lane: LaneRef,
    private readonly fence: Fence,
    options: LaneWriterOptions = {},
  ) {
    this.depth = Math.max(1, Math.floor(options.depth ?? 1));
  }

  /** Mints a fresh attempt id, time-marked with this moment on the ports' clock. */
  nextAttemptId(): string {
    return `w${this.writerId}.e${this.fence.epoch}.${timeMarkSegment(this.ports.clock.now())}.${++this.sequence}`;
  }

  append(records: readonly Uint8Array[], attemptId = this.nextAttemptId()): Promise<AppendOutcome> {
    if (this.closed)
      return Promise.reject(
        new CutpointError('Stream.WriterClosed', 'stream.writer_closed', `writer ${this.writerId} is closed`),
      );
    if (!attemptId.startsWith(`${writerAttemptPrefix(this.writerId)}e${this.fence.epoch}.`)) {
      return Promise.reject(
        new ValidationError(
          'stream.invalid_attempt',
          `attempt ${attemptId} was not minted by writer ${this.writerId}: take ids from nextAttemptId()`,
        ),
      );
    }
    const answer = this.appendMinted(records, attemptId);
    this.pending.add(answer);
    void answer.catch(() => undefined).finally(() => this.pending.delete(answer));
    return answer;
  }

  /**
   * Waits for every append, then releases the writer slot — unless some append threw after
   * its WAL object was written (its head CAS outcome unknown to this writer): the slot then
   * stays held and `unsettled` names those attempts for `stream resolve --writer`. A lane
   * suspended by one of its attempts (MAY_HAVE_COMMITTED) stays suspended by it. Later
   * appends are refused (stream.writer_closed).
   */
  async close(): Promise<WriterClosed> {
    this.closed = true;
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
    const unsettled = [...this.unsettled];
    if (unsettled.length > 0) return { released: false, unsettled };
    if (!this.claimSent) return { released: true, unsettled };
    const known = this.head?.mine ? this.head.version : undefined;
    const released = await releaseWriterSlot(this.ports, this.lane, this.writerId, 'writer', known);
    this.forget();
    return { released, unsettled };
  }

  private async appendMinted(records: readonly Uint8Array[], attemptId: string): Promise<AppendOutcome> {
    await this.acquire();
    try {
      await this.ensureHead();
      if (this.head!.heldBy !== undefined) {
        // Another writer holds the lane: nothing is written (the minted id is never used again).
        const refusal = LaneSuspendedError.byWriter(this.lane, this.head!.heldBy);
        this.forget();
        return {
          ...uncommittedOutcome('KNOWN_NOT_COMMITTED', { ...this.lane, attemptId }, records.length, refusal.name),
          detail: refusal.message,
        };
      }
      const start = this.nextStart!;
      this.nextStart = start + records.length;
      const ref = { ...this.lane, attemptId, session: this.fence };
      const encoded = records.map((r) => Buffer.from(r).toString('base64'));
      // The WAL PUT runs now (ahead of earlier CASes); the CAS joins the in-order chain.
      const known = { version: 0, start, attemptWindowSeconds: this.attemptWindowSeconds! };
      const put = rerunTransient((attempt) =>
        writeWal({ ...ref, records: encoded }, this.ports, attempt === 1 ? known : undefined),
      );
      const previous = this.tail;
      const cas = put.then(
        async (written) => {
          await previous.catch(() => undefined);
          // Thrown from here on, the CAS may have gone out: the slot stays held at close().
          return this.commit(written).catch((error: unknown) => {
            this.unsettled.add(attemptId);
            throw error;
          });
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
    if (head.heldBy !== undefined) {
      // The slot is another writer's now (or this one's is being resolved): never its turn.
      this.forget();
      return rerunTransient(() => retireAttempt({ ...written, reason: 'Stream.LaneSuspended' }, this.ports));
    }
    if (head.suspendedBy) {
      // Another attempt's outcome is unknown: the lane takes no append until it is resolved
      // (the version a CAS would carry includes the suspension, so the check is here).
      this.forget();
      return rerunTransient(() => retireAttempt({ ...written, reason: 'Stream.LaneSuspended' }, this.ports));
    }
    if (written.wal.start !== head.committedEnd || written.wal.fenceEpoch !== this.fence.epoch) {
      // Bound behind a batch that did not commit: never its turn. Spend it (off the happy path).
      this.forget();
      return rerunTransient(() => retireAttempt({ ...written, reason: 'Stream.AttemptAborted' }, this.ports));
    }
    const outcome = await commitAndSettle(
      { ...written, expected: { version: head.version, attemptWindowSeconds: this.attemptWindowSeconds! } },
      this.ports,
    );
    const { headVersion, ...result } = outcome;
    if (outcome.status === 'KNOWN_COMMITTED' && headVersion !== undefined && head.mine)
      this.head = { version: headVersion, committedEnd: outcome.end!, mine: true };
    else this.forget();
    return result;
  }

  /** Loads the head once for everyone waiting on it, claiming the writer slot when it is free. */
  private async ensureHead(): Promise<void> {
    if (this.head) return;
    this.claimSent = true;
    this.loading ??= claimWriterSlot(this.ports, this.lane, this.fence, this.writerId).finally(
      () => (this.loading = undefined),
    );
    const head = await this.loading;
    if (this.head) return;
    const mine = holdsSlot(head, this.writerId);
    this.head = {
      version: head.version,
      committedEnd: head.committedEnd,
      mine,
      ...(head.suspendedBy ? { suspendedBy: head.suspendedBy } : {}),
      ...(head.writer && !mine ? { heldBy: head.writer.id } : {}),
    };
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
