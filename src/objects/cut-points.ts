/** Cut points of an operator's object write (`cutpoint object put`). */
export const OBJECT_CUT_POINTS = {
  /** The authority claim of the key for these bytes' SHA-256. */
  claim: 'objects.claim',
  /** The PUT itself. */
  put: 'cli.object.put',
} as const;
