import type { CutPointPlace } from '../cut-points.js';
import { GENERATION_CUT_POINTS } from '../generation/cut-points.js';
import { COMPACTION_RUN_CUT_POINTS } from './compaction/cut-points.js';
import { CURSOR_CUT_POINTS } from './cursor/cut-points.js';
import { STREAM_CUT_POINTS } from './cut-points.js';
import { GC_FLOW_CUT_POINTS } from './gc/cut-points.js';

const S = STREAM_CUT_POINTS;
const G = GENERATION_CUT_POINTS;
const C = CURSOR_CUT_POINTS;

/**
 * One batch appended: the WAL object and the head CAS; a head CAS whose outcome stays
 * unknown suspends the lane, and an attempt that can no longer commit (a suspended lane, a
 * newer owner) is spent. The index and generation 0 are derived off this path.
 */
const APPEND = [S.wal, S.headCas, S.suspend, S.retire];
/**
 * Generation 0 of a committed range through the generation-commit mechanism in-process:
 * the task, its one source (the WAL object) copied server-side, PREPARED, COMMITTED, the
 * index entry and the lane's mark; a copy that does not verify (a WAL object gone bad)
 * ends in a proven abort.
 */
const GENERATION_0 = [G.taskPut, G.objectCopy, G.recordPut, G.commitCas, G.abortCas, S.gen0];
/** A read of committed ranges: an index entry rebuilt from its commit record, each range's copies leased, read and released; a copy gone bad quarantined. */
const READ = [S.indexRepair, S.pin, S.provider, S.quarantine, S.release];

/**
 * Where each stream cut point is crossed (and the generation cut points the lane's
 * maintenance crosses): each place with every cut point it reaches from some state it acts
 * on, as test/integration/cut-point-reach-stream.test.ts sees them fire.
 */
export const STREAM_PLACES: readonly CutPointPlace[] = [
  { command: 'stream create', crosses: [S.createHead] },
  { flow: 'stream-takeover', command: 'stream takeover', crosses: [S.takeoverCas] },
  // Also `stream append --from FILE.jsonl`: the group-commit producer runs the same steps in-process.
  { flow: 'stream-append', command: 'stream append', crosses: APPEND },
  // Not committed: the attempt spent, the suspension lifted; committed: the index and generation 0 repaired.
  // --writer: the writer slot marked (stream.resolve.fence), each attempt settled, then the slot released.
  {
    flow: 'stream-resolve-append',
    command: 'stream resolve',
    crosses: [S.resolveFence, S.unsuspend, S.writerRelease, S.index, ...GENERATION_0],
  },
  // The owner's fast path embedded in a producer (pipelinedProducer runs on it): the writer
  // slot claimed once, then each batch's WAL object and head CAS; SuspendLane on an unknown
  // outcome, a batch bound behind one that did not commit spent; close() releases the slot.
  { library: 'LaneWriter', crosses: [S.writerClaim, ...APPEND, S.writerRelease] },
  { command: 'stream read', crosses: READ },
  // --release re-reads the copy through the provider before deleting its quarantine item.
  { command: 'stream quarantine', crosses: [S.provider, S.quarantineRelease] },
  { flow: 'stream-trim', command: 'stream trim', crosses: [S.trimCas] },
  { flow: 'stream-gc', command: 'stream gc', crosses: GC_FLOW_CUT_POINTS },
  // Generation 0 committed, then the lane's settled tasks cleaned (task first, after its checks).
  { flow: 'stream-materialize', command: 'stream materialize', crosses: [...GENERATION_0, G.taskCleanup] },
  // Its output is its own object (stream.compact.object): the generation's write finds it and writes nothing.
  // Two runs racing over one start (different --max-ranges) prepare one slot: the later one's generation is aborted.
  { flow: 'stream-compact', command: 'stream compact', crosses: [...COMPACTION_RUN_CUT_POINTS, G.abortCas] },
  // Child executions of the three flows above, in that order.
  {
    flow: 'stream-maintain',
    crosses: [...GENERATION_0, G.taskCleanup, ...COMPACTION_RUN_CUT_POINTS, ...GC_FLOW_CUT_POINTS],
  },
  { command: 'stream consume', crosses: [C.takeover, C.commit, ...READ] },
  { command: 'stream seek', crosses: [C.seek] },
  { command: 'stream policy', crosses: [C.policy] },
];
