import { GC_CUT_POINTS } from './gc/cut-points.js';

/**
 * Every effect of the stream log, by name. The append cut points are the rows of seed
 * 002's append table (see statemachines/stream-append.asl.json).
 */
export const STREAM_CUT_POINTS = {
  createHead: 'stream.create.head',
  takeoverCas: 'stream.takeover.head-cas',
  /** Before primary WAL I/O / WAL partial or uncertain / WAL durable, before intent. */
  wal: 'stream.append.wal',
  /** Intent/protection, before head CAS. */
  intent: 'stream.append.intent',
  /** Head CAS condition fails / head CAS response unknown. */
  headCas: 'stream.append.head-cas',
  suspend: 'stream.append.suspend',
  /** Head committed, index fails. */
  index: 'stream.append.index',
  /** Head committed, required object generation fails (generation-commit cut points follow). */
  gen0: 'stream.append.gen0',
  retire: 'stream.append.retire',
  resolveFence: 'stream.resolve.fence',
  unsuspend: 'stream.resolve.unsuspend',
  indexRepair: 'stream.read.index-repair',
  quarantine: 'stream.read.quarantine',
  trimCas: 'stream.trim.cas',
  ...GC_CUT_POINTS,
} as const;
