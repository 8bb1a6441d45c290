/**
 * Every effect of the consumer cursors (src/stream/cursor/), by name. The commands that
 * cross each one: src/stream/cut-point-places.ts.
 */
export const CURSOR_CUT_POINTS = {
  /** A new cursor owner session: the cursor's fence and the record of what it issued, in one transaction. */
  takeover: 'stream.cursor.takeover',
  /** A consumer's fenced CAS of its group's position. */
  commit: 'stream.cursor.commit',
  /** An operator's explicit move of a cursor (backwards or forwards), as a takeover. */
  seek: 'stream.cursor.seek',
  /** The stream's retention policy item (the groups a trim must wait for). */
  policy: 'stream.cursor.policy',
} as const;
