/** The recovery dispatcher's one effect: starting the recovering flow under its derived name. */
export const RECOVERY_CUT_POINTS = {
  start: 'recovery.dispatch.start',
} as const;
