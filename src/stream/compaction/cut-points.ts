import { GENERATION_CUT_POINTS } from '../../generation/cut-points.js';

/**
 * Every effect of stream compaction, by name (issue #11): the output object, the
 * `compaction#<end>` authority record, the lane's `compact#mark` CAS and the task cleanup.
 * The generation-commit cut points (task, PREPARED record, commit) are crossed in between.
 * They are part of STREAM_CUT_POINTS.
 */
export const COMPACTION_CUT_POINTS = {
  /** The compacted output object (one batch of every record of the run, in offset order). */
  compactObject: 'stream.compact.object',
  /** `compaction#<end>`: put-if-absent by exact identity, after the generation committed. */
  compactRecord: 'stream.compact.record',
  /** The lane's compaction mark moved past the run by CAS. */
  compactMark: 'stream.compact.mark',
  /** Task cleanup: the generation mechanism's task item deleted after everything verified. */
  compactCleanup: 'stream.compact.cleanup',
} as const;

/**
 * Every cut point one compaction run crosses, in order: the generation-commit mechanism's
 * (task, PREPARED record, commit) between compaction's own. The compaction matrix and the
 * stream-compact flow tests run each of them.
 */
export const COMPACTION_RUN_CUT_POINTS = [
  GENERATION_CUT_POINTS.taskPut,
  COMPACTION_CUT_POINTS.compactObject,
  GENERATION_CUT_POINTS.recordPut,
  GENERATION_CUT_POINTS.commitCas,
  COMPACTION_CUT_POINTS.compactRecord,
  COMPACTION_CUT_POINTS.compactMark,
  COMPACTION_CUT_POINTS.compactCleanup,
] as const;
