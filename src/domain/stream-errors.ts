import { CutpointError } from './errors.js';
import type { LaneRef } from './stream.js';

/** The stream log's errors (src/domain/stream.ts): each a stable `name` and diagnostic code. */

/**
 * The lane refuses appends while suspended: by an attempt whose outcome is unknown, or by
 * the writer slot of another LaneWriter (one that has not closed, or a resolve of it under
 * way). The error names what holds the lane and the command that resolves it.
 */
export class LaneSuspendedError extends CutpointError {
  constructor(
    lane: LaneRef,
    /** The attempt whose unknown outcome holds the lane; for a writer slot, `w<writer>`. */
    readonly attemptId: string,
    /** The LaneWriter whose slot holds the lane, if that is what holds it. */
    readonly writerId?: string,
  ) {
    super(
      'Stream.LaneSuspended',
      'stream.lane_suspended',
      writerId === undefined
        ? `lane ${lane.stream}/${lane.partition} is suspended by attempt ${attemptId}; resolve it first`
        : `lane ${lane.stream}/${lane.partition} is held by writer ${writerId} (a LaneWriter that has not closed); resolve it first: cutpoint stream resolve ${lane.stream} --partition ${lane.partition} --writer ${writerId}`,
    );
  }

  /** Refused by another LaneWriter's slot. */
  static byWriter(lane: LaneRef, writerId: string): LaneSuspendedError {
    return new LaneSuspendedError(lane, `w${writerId}`, writerId);
  }
}

export class LaneMissingError extends CutpointError {
  constructor(lane: LaneRef) {
    super(
      'Stream.LaneMissing',
      'stream.lane_missing',
      `lane ${lane.stream}/${lane.partition} does not exist; create the stream first`,
    );
  }
}

/** A read from past the committed end: no position beyond it is ever handed out. */
export class OffsetOutOfRangeError extends CutpointError {
  constructor(lane: LaneRef, offset: number, committedEnd: number) {
    super(
      'Stream.OffsetOutOfRange',
      'stream.offset_out_of_range',
      `offset ${offset} is past the committed end ${committedEnd} of ${lane.stream}/${lane.partition}; read from ${committedEnd} at most`,
    );
  }
}

/** The same attempt id with another batch: the attempt's identity is its batch. */
export class AttemptIdentityConflictError extends CutpointError {
  constructor(attemptId: string, detail: string) {
    super(
      'Stream.AttemptIdentityConflict',
      'stream.attempt_identity_conflict',
      `attempt ${attemptId} ${detail}; an attempt id names exactly one batch: use a new attempt id for other records`,
    );
  }
}

/** A fence the lane never issued (forged): refused before anything is written. */
export class UnknownSessionError extends CutpointError {
  constructor(lane: LaneRef) {
    super(
      'Stream.UnknownSession',
      'stream.unknown_session',
      `lane ${lane.stream}/${lane.partition} never issued this session; take the lane over first`,
    );
  }
}

export class OffsetTrimmedError extends CutpointError {
  constructor(offset: number, trimOffset: number) {
    super('Stream.OffsetTrimmed', 'stream.offset_trimmed', `offset ${offset} is below the trim offset ${trimOffset}`);
  }
}

export class RangeUnreadableError extends CutpointError {
  constructor(start: number, end: number, detail: string) {
    super(
      'Stream.RangeUnreadable',
      'stream.range_unreadable',
      `committed range [${start}, ${end}) has no healthy copy: ${detail}`,
    );
  }
}

/** The session is not the lane's owner (a stale writer after a takeover). */
export class FencedError extends CutpointError {
  constructor(lane: LaneRef, detail: string) {
    super('Stream.Fenced', 'stream.fenced', `lane ${lane.stream}/${lane.partition}: ${detail}`);
  }
}

/** The attempt was proven not committed; its id is spent — append with a new attempt id. */
export class AttemptAbortedError extends CutpointError {
  constructor(attemptId: string, reason: string) {
    super(
      'Stream.AttemptAborted',
      'stream.attempt_aborted',
      `attempt ${attemptId} is aborted (${reason}); use a new attempt id`,
    );
  }
}

/** Evidence contradicts itself; the lane stays suspended for a person to look at. */
export class ResolveInconsistentError extends CutpointError {
  constructor(attemptId: string, detail: string) {
    super(
      'Stream.ResolveInconsistent',
      'stream.resolve_inconsistent',
      `attempt ${attemptId}: ${detail}; the lane stays suspended`,
    );
  }
}

/**
 * `stream create` of a stream that exists with another number of partitions or another
 * attempt window: a stream's shape never changes, so this is refused with nothing written
 * (the same shape again is success, reporting the lanes as they stand).
 */
export class StreamShapeError extends CutpointError {
  constructor(stream: string, existing: string, asked: string) {
    super(
      'Stream.ExistsWithOtherShape',
      'stream.exists_with_other_shape',
      `stream ${stream} already exists with ${existing}, not ${asked}: a stream's partitions and attempt window never change; nothing was written (cutpoint stream describe ${stream})`,
    );
  }
}

/**
 * A time-marked attempt older than its lane's attempt window (src/domain/attempt-time.ts):
 * refused before anything is written. Past the window its evidence (spent marker, collected
 * record) may have been retired, so neither a re-run nor a resolve can tell any more whether
 * it committed — and a new attempt for the same records could append them twice.
 */
export class AttemptExpiredError extends CutpointError {
  constructor(attemptId: string, markedAt: string, window: string, next?: string) {
    super(
      'Stream.AttemptExpired',
      'stream.attempt_expired',
      `attempt ${attemptId} is time-marked ${markedAt}, older than the lane's attempt window of ${window}: ${next ?? EXPIRED_NEXT}; nothing was written`,
    );
  }
}

const EXPIRED_NEXT =
  "past the window it is neither re-run nor resolved (its evidence may have been retired), so no new attempt id can be proven safe for its records — whether they committed is in the lane's commit records (`cutpoint stream read` from the range it was bound to)";

/** A time mark further ahead of this clock than the margin allows: a clock that is wrong, or a forged mark. */
export class AttemptTimeFutureError extends CutpointError {
  constructor(attemptId: string, markedAt: string, now: string, marginMinutes: number) {
    super(
      'Stream.AttemptTimeFuture',
      'stream.attempt_time_future',
      `attempt ${attemptId} is time-marked ${markedAt}, more than ${marginMinutes} minutes after this clock's ${now}: check the clock of whoever minted it; nothing was written`,
    );
  }
}
