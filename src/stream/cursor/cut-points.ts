/**
 * Every effect of the consumer cursors (src/stream/cursor/), by name. Registered in
 * src/cut-points.ts with the commands that hit each one.
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

/** The commands that hit each cursor cut point (for `cutpoint faults list`). */
export const CURSOR_CUT_POINT_COMMANDS: Record<string, string[]> = {
  [CURSOR_CUT_POINTS.takeover]: ['stream consume'],
  [CURSOR_CUT_POINTS.commit]: ['stream consume'],
  [CURSOR_CUT_POINTS.seek]: ['stream seek'],
  [CURSOR_CUT_POINTS.policy]: ['stream policy'],
};
