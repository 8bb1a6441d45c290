/** The local runtime's own effects (the runner's Distributed Map ResultWriter), by name. */
export const LOCAL_CUT_POINTS = {
  /** A Map Run's result objects and manifest written to the object store (ResultWriter). */
  mapRunResultWrite: 'local.map-run.result-write',
} as const;
