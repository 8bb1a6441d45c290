import { COMPACTION_CUT_POINTS } from './compaction/cut-points.js';
import { GC_CUT_POINTS } from './gc/cut-points.js';

/**
 * Every effect of the stream log, by name. The append cut points are the rows of the append
 * cut-point table (docs/rules.md#append-cut-points; statemachines/stream-append.asl.json).
 */
export const STREAM_CUT_POINTS = {
  createHead: 'stream.create.head',
  takeoverCas: 'stream.takeover.head-cas',
  /**
   * Before primary WAL I/O / WAL partial or uncertain / WAL durable, before head CAS. There
   * is no intent item: the WAL object's metadata (attempt, SHA-256, fence epoch, start) is
   * the pending evidence of an append before its head CAS.
   */
  wal: 'stream.append.wal',
  /** Head CAS condition fails / head CAS response unknown (the CAS writes head + commit#<end>). */
  headCas: 'stream.append.head-cas',
  suspend: 'stream.append.suspend',
  /** A LaneWriter claims the lane's writer slot, once per writer (writer-slot.ts). */
  writerClaim: 'stream.append.writer-claim',
  /** The writer slot released: by the writer's close(), or by `stream resolve --writer` once its attempts are settled. */
  writerRelease: 'stream.append.writer-release',
  /** Spending an attempt proven not committed (spent marker + head version bump). */
  retire: 'stream.append.retire',
  /** Index entry written off the acknowledged path (resolve's repair). */
  index: 'stream.append.index',
  /** Head committed, required object generation fails (generation-commit cut points follow); off the acknowledged path. */
  gen0: 'stream.append.gen0',
  /** Resolve spends an attempt; `--writer` first marks the writer slot as being resolved (no CAS of it applies after). */
  resolveFence: 'stream.resolve.fence',
  unsuspend: 'stream.resolve.unsuspend',
  indexRepair: 'stream.read.index-repair',
  quarantine: 'stream.read.quarantine',
  /** A reader's GET of one copy (compacted, gen0 or WAL): a provider failure, retried, never a verdict on the bytes. */
  provider: 'stream.read.provider',
  /** Deleting a quarantine item after the copy was re-verified by exact identity. */
  quarantineRelease: 'stream.read.quarantine-release',
  trimCas: 'stream.trim.cas',
  ...GC_CUT_POINTS,
  /** Keys prefixed `compact`: a spread may not shadow another registry's key (e.g. GC's `mark`). */
  ...COMPACTION_CUT_POINTS,
} as const;
