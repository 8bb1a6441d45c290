/**
 * Every effect (and the reads that decide one) of quality governance
 * (docs/rules.md#governance-cut-points), named for the fault injector. Registered in src/cut-points.ts.
 * The capsule writes are legs of the invocation's journaled write, so each of them is the
 * cut point of that one transaction.
 */
export const QUALITY_CUT_POINTS = {
  stagedProbe: 'quality.staged.probe',
  preparedPut: 'quality.prepared.put',
  capsulePrepare: 'quality.capsule.prepare',
  readerAcquire: 'quality.reader.acquire',
  targetProbe: 'quality.target.probe',
  workerReap: 'quality.worker.reap',
  pendingCommit: 'quality.pending.commit',
  completeCommit: 'quality.complete.commit',
  failedCommit: 'quality.failed.commit',
  completionPut: 'quality.completion.put',
  completionRecord: 'quality.completion.record',
  replayRead: 'quality.replay.read',
} as const;

export type QualityCutPoint = (typeof QUALITY_CUT_POINTS)[keyof typeof QUALITY_CUT_POINTS];

/** The cut points one observation (ObserveTarget, `quality observe`, resume's observe step) crosses, in order. */
export const OBSERVATION_CUT_POINTS: readonly QualityCutPoint[] = [
  QUALITY_CUT_POINTS.readerAcquire,
  QUALITY_CUT_POINTS.targetProbe,
  QUALITY_CUT_POINTS.workerReap,
  QUALITY_CUT_POINTS.pendingCommit,
  QUALITY_CUT_POINTS.completeCommit,
  QUALITY_CUT_POINTS.failedCommit,
  QUALITY_CUT_POINTS.completionPut,
  QUALITY_CUT_POINTS.completionRecord,
];
