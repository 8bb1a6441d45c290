import { CutpointError } from '../../domain/errors.js';
import type { LaneRef } from '../../domain/stream.js';

/** The consumer cursors' errors: each a stable `name` and diagnostic code. Nothing was written. */

const at = (lane: LaneRef, group: string) => `cursor ${group} of ${lane.stream}/${lane.partition}`;

/** The session is not the cursor's owner any more: a takeover (or seek) fenced it. */
export class CursorFencedError extends CutpointError {
  constructor(lane: LaneRef, group: string, epoch: number, current: number) {
    super(
      'Stream.CursorFenced',
      'stream.cursor_fenced',
      `${at(lane, group)}: session epoch ${epoch} was fenced by epoch ${current}; nothing was committed`,
    );
  }
}

/** A cursor fence the group never issued (forged, or a group never taken over). */
export class CursorUnknownSessionError extends CutpointError {
  constructor(lane: LaneRef, group: string) {
    super(
      'Stream.CursorUnknownSession',
      'stream.cursor_unknown_session',
      `${at(lane, group)} never issued this session; take the cursor over first (cutpoint stream consume)`,
    );
  }
}

/** A position past the committed end is never handed out, nor committed. */
export class CursorPastEndError extends CutpointError {
  constructor(lane: LaneRef, group: string, position: number, committedEnd: number) {
    super(
      'Stream.CursorPastEnd',
      'stream.cursor_past_end',
      `${at(lane, group)}: position ${position} is past the committed end ${committedEnd}`,
    );
  }
}

/** A position below the trim offset: those records are gone. */
export class CursorBelowTrimError extends CutpointError {
  constructor(lane: LaneRef, group: string, position: number, trimOffset: number) {
    super(
      'Stream.CursorBelowTrim',
      'stream.cursor_below_trim',
      `${at(lane, group)}: position ${position} is below the trim offset ${trimOffset}; records [${position}, ${trimOffset}) are gone — to go on from ${trimOffset}, run: cutpoint stream seek ${lane.stream} --partition ${lane.partition} --group ${group} --to ${trimOffset} --yes (or name the group in the retention policy: cutpoint stream policy)`,
    );
  }
}

/** A commit moves a cursor forward only; moving it back is the separate, explicit seek. */
export class CursorBackwardsError extends CutpointError {
  constructor(lane: LaneRef, group: string, position: number, current: number) {
    super(
      'Stream.CursorBackwards',
      'stream.cursor_backwards',
      `${at(lane, group)} is at ${current}; a commit never moves it back to ${position} (use cutpoint stream seek --yes)`,
    );
  }
}

/** A trim past a cursor the stream's retention policy names. */
export class TrimPastCursorError extends CutpointError {
  constructor(
    lane: LaneRef,
    to: number,
    readonly group: string,
    readonly position: number,
  ) {
    super(
      'Stream.TrimPastCursor',
      'stream.trim_past_cursor',
      `lane ${lane.stream}/${lane.partition}: trim to ${to} refused: the retention policy names group ${group}, whose cursor is at ${position}; trim to ${position} at most`,
    );
  }
}
