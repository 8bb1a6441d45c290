import { DELIVERY_CUT_POINTS } from './delivery/cut-points.js';
import { GENERATION_CUT_POINTS } from './generation/cut-points.js';
import { OBJECT_CUT_POINTS } from './objects/cut-points.js';
import { STREAM_CUT_POINTS } from './stream/cut-points.js';
import { CURSOR_CUT_POINT_COMMANDS, CURSOR_CUT_POINTS } from './stream/cursor/cut-points.js';
import { LOCAL_CUT_POINTS } from './local/cut-points.js';
import { QUALITY_CUT_POINTS } from './quality/cut-points.js';
import { PUBLICATION_CUT_POINTS } from './domain/publication/cut-points.js';
import { RECOVERY_CUT_POINTS } from './recovery/cut-points.js';

/**
 * Every cut point the code runs through the fault injector, from the subsystems' own
 * registries (src/<subsystem>/cut-points.ts), with where each one is hit: the flows
 * (statemachines/<flow>.asl.json) and the commands that run it in-process. `CUTPOINT_FAULTS`
 * may name only these (`faults.unknown_cut_point` otherwise); `cutpoint faults list`
 * prints them.
 */
export interface CutPointInfo {
  name: string;
  subsystem: 'generation' | 'stream' | 'delivery' | 'quality' | 'objects' | 'local' | 'recovery';
  /** Flows whose steps hit it. */
  flows: string[];
  /** Commands that hit it in-process (besides `flow run` of those flows). */
  commands: string[];
  /** Lambda handlers outside every flow that hit it (the recovery dispatcher). */
  handlers: string[];
}

/** Where a stream cut point is hit, by its second segment. */
const STREAM_WHERE: Record<string, Pick<CutPointInfo, 'flows' | 'commands'>> = {
  create: { flows: [], commands: ['stream create'] },
  takeover: { flows: ['stream-takeover'], commands: ['stream takeover'] },
  append: { flows: ['stream-append', 'stream-resolve-append'], commands: ['stream append', 'stream resolve'] },
  resolve: { flows: ['stream-resolve-append'], commands: ['stream resolve'] },
  read: { flows: [], commands: ['stream read', 'stream quarantine'] },
  trim: { flows: ['stream-trim'], commands: ['stream trim'] },
  gc: { flows: ['stream-gc'], commands: ['stream gc'] },
  compact: { flows: [], commands: ['stream compact'] },
};

const D = DELIVERY_CUT_POINTS;
const P = PUBLICATION_CUT_POINTS;
const Q = QUALITY_CUT_POINTS;

/** What a bounded reader's observation crosses, wherever it runs (ObserveTarget, the operator's observe, resume). */
const OBSERVATION = [Q.readerAcquire, Q.targetProbe, Q.workerReap, Q.pendingCommit, Q.completeCommit, Q.failedCommit, Q.completionPut, Q.completionRecord, P.observe];
/** A ClickHouse route's candidate, staged quality and capsule, before its one dispatch. */
const CANDIDATE = [P.candidateCreate, P.candidateFill, Q.stagedProbe, Q.preparedPut, Q.capsulePrepare];
/** The one EXCHANGE and its proof. */
const DISPATCH = [P.dispatchIntent, P.exchange, P.observe, P.commitRecord];
/** The end of a delivery after its publication: evidence, checkpoint, the stage dropped, custody released. */
const FINISH = [D.evidencePut, D.checkpointAdvance, D.dropStaging, D.custodyRelease, D.journalTransition];
/** Extraction into the stage, part by part (the Distributed Map writes its part results). */
const EXTRACT = [D.custodyAcquire, D.journalTransition, D.createStaging, D.stagingRecord, D.planPut, D.partClaim, D.chunkPut, D.partReceipt, LOCAL_CUT_POINTS.mapRunResultWrite];

/**
 * Where each delivery, publication and quality cut point is crossed: each place (a flow,
 * the command that runs the same use case in-process) with every cut point it can reach
 * from some state it acts on. Exactly this is what test/integration/cut-point-reach-delivery.test.ts
 * sees fire, scenario by scenario.
 */
const DELIVERY_PLACES: ReadonlyArray<{ flow?: string; command?: string; crosses: readonly string[] }> = [
  // A SQL route: the staged load, one publication transaction, the end.
  { flow: 'deliver-window', command: 'delivery run', crosses: [...EXTRACT, D.loadChunk, D.publishCommit, ...FINISH] },
  // A ClickHouse route: the stage loaded by INSERT, the candidate, one EXCHANGE, the observation, the predecessor dropped.
  { flow: 'publish-clickhouse', crosses: [...EXTRACT, P.loadInsert, ...CANDIDATE, ...DISPATCH, ...OBSERVATION, P.predecessorDrop, ...FINISH] },
  { flow: 'quality-observe', command: 'quality observe', crosses: [D.custodyAcquire, ...OBSERVATION] },
  { command: 'quality replay', crosses: [Q.replayRead, P.observe] },
  // SQL: the journal decides; ClickHouse: the EXCHANGE proved by UUID, or fenced out by renaming the candidate.
  { flow: 'delivery-reconcile', command: 'delivery reconcile', crosses: [D.custodyAcquire, D.journalTransition, P.observe, P.commitRecord, P.fenceRename] },
  // Source-free: a SQL publication from the stage; a ClickHouse candidate filled from the stage, dispatched, observed.
  { flow: 'delivery-resume', command: 'delivery resume', crosses: [D.custodyAcquire, D.publishCommit, ...CANDIDATE, ...DISPATCH, ...OBSERVATION, P.predecessorDrop, ...FINISH] },
  // The stage (and a ClickHouse candidate, by UUID) dropped; custody released RETIRED.
  { flow: 'delivery-retire', command: 'delivery retire', crosses: [D.custodyAcquire, D.dropStaging, D.custodyRelease, P.observe, P.predecessorDrop] },
];

function deliveryPlacesOf(name: string): Pick<CutPointInfo, 'flows' | 'commands'> {
  const at = DELIVERY_PLACES.filter((p) => p.crosses.includes(name));
  return { flows: at.flatMap((p) => (p.flow ? [p.flow] : [])), commands: at.flatMap((p) => (p.command ? [p.command] : [])) };
}

function build(): CutPointInfo[] {
  const all: Array<Omit<CutPointInfo, 'handlers'> & { handlers?: string[] }> = [];
  for (const name of Object.values(GENERATION_CUT_POINTS)) all.push({ name, subsystem: 'generation', flows: ['commit-generation'], commands: ['demo generation'] });
  for (const name of Object.values(STREAM_CUT_POINTS)) {
    const where = STREAM_WHERE[name.split('.')[1] ?? ''] ?? { flows: [], commands: [] };
    all.push({ name, subsystem: 'stream', ...where });
  }
  for (const name of Object.values(CURSOR_CUT_POINTS)) all.push({ name, subsystem: 'stream', flows: [], commands: CURSOR_CUT_POINT_COMMANDS[name] ?? [] });
  for (const name of new Set(Object.values(DELIVERY_CUT_POINTS))) all.push({ name, subsystem: 'delivery', ...deliveryPlacesOf(name) });
  // ClickHouse EXCHANGE publication.
  for (const name of Object.values(PUBLICATION_CUT_POINTS)) all.push({ name, subsystem: 'delivery', ...deliveryPlacesOf(name) });
  for (const name of Object.values(QUALITY_CUT_POINTS)) all.push({ name, subsystem: 'quality', ...deliveryPlacesOf(name) });
  for (const name of Object.values(OBJECT_CUT_POINTS)) all.push({ name, subsystem: 'objects', flows: [], commands: ['object put'] });
  // The local runner's own effect: a Distributed Map's ResultWriter (the delivery flows' part results).
  all.push({ name: LOCAL_CUT_POINTS.mapRunResultWrite, subsystem: 'local', ...deliveryPlacesOf(LOCAL_CUT_POINTS.mapRunResultWrite) });
  // The recovery dispatcher (EventBridge -> Lambda) starting a recovering flow after a failure.
  all.push({ name: RECOVERY_CUT_POINTS.start, subsystem: 'recovery', flows: [], commands: [], handlers: ['functions/recovery/dispatch.ts'] });
  return all.map((c) => ({ ...c, handlers: c.handlers ?? [] })).sort((a, b) => a.name.localeCompare(b.name));
}

export const CUT_POINTS: readonly CutPointInfo[] = build();

export const CUT_POINT_NAMES: ReadonlySet<string> = new Set(CUT_POINTS.map((c) => c.name));
