import { DELIVERY_CUT_POINTS } from './delivery/cut-points.js';
import { GENERATION_CUT_POINTS } from './generation/cut-points.js';
import { OBJECT_CUT_POINTS } from './objects/cut-points.js';
import { STREAM_CUT_POINTS } from './stream/cut-points.js';
import { CURSOR_CUT_POINTS } from './stream/cursor/cut-points.js';
import { STREAM_PLACES } from './stream/cut-point-places.js';
import { LOCAL_CUT_POINTS } from './local/cut-points.js';
import { QUALITY_CUT_POINTS } from './domain/quality/cut-points.js';
import { PUBLICATION_CUT_POINTS } from './domain/publication/cut-points.js';
import { RECOVERY_CUT_POINTS } from './recovery/cut-points.js';

/**
 * Every cut point the code runs through the fault injector, from the subsystems' own
 * registries (src/<subsystem>/cut-points.ts), with where each one is hit: the flows
 * (statemachines/<flow>.asl.json), the commands that run it in-process, the handlers and
 * the library entry points producers embed (the LaneWriter),
 * from the places tables below (each place with what it crosses, as the reach tests
 * test/integration/cut-point-reach-*.test.ts see it fire). `CUTPOINT_FAULTS` may name only
 * these (`faults.unknown_cut_point` otherwise); `cutpoint faults list` prints them.
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
  /** Library entry points a producer embeds that hit it (the LaneWriter). */
  libraries: string[];
}

/** A place that crosses cut points — a flow, the command running it (or the same use case in-process), a handler — and what it crosses. */
export interface CutPointPlace {
  flow?: string;
  command?: string;
  /** A Lambda handler outside every flow (the recovery dispatcher). */
  handler?: string;
  /** A library entry point a producer embeds, run by no command or flow (the LaneWriter). */
  library?: string;
  crosses: readonly string[];
}

const D = DELIVERY_CUT_POINTS;
const P = PUBLICATION_CUT_POINTS;
const Q = QUALITY_CUT_POINTS;

/** What a bounded reader's observation crosses, wherever it runs (ObserveTarget, the operator's observe, resume). */
const OBSERVATION = [
  Q.readerAcquire,
  Q.targetProbe,
  Q.workerReap,
  Q.pendingCommit,
  Q.completeCommit,
  Q.failedCommit,
  Q.completionPut,
  Q.completionRecord,
  P.observe,
];
/** A ClickHouse route's candidate, staged quality and capsule, before its one dispatch. */
const CANDIDATE = [P.candidateCreate, P.candidateFill, Q.stagedProbe, Q.preparedPut, Q.capsulePrepare];
/** The one EXCHANGE and its proof. */
const DISPATCH = [P.dispatchIntent, P.exchange, P.observe, P.commitRecord];
/** The end of a delivery after its publication: evidence, checkpoint, the stage dropped, custody released. */
const FINISH = [D.evidencePut, D.checkpointAdvance, D.dropStaging, D.custodyRelease, D.journalTransition];
/** Extraction into the stage, part by part (the Distributed Map writes its part results). */
const EXTRACT = [
  D.custodyAcquire,
  D.journalTransition,
  D.createStaging,
  D.stagingRecord,
  D.planPut,
  D.partClaim,
  D.chunkPut,
  D.partReceipt,
  LOCAL_CUT_POINTS.mapRunResultWrite,
];

/** What resume crosses, by its command and its flow alike. */
const RESUME = [
  D.custodyAcquire,
  D.partClaim,
  D.chunkPut,
  D.loadChunk,
  P.loadInsert,
  D.partReceipt,
  D.publishCommit,
  ...CANDIDATE,
  ...DISPATCH,
  ...OBSERVATION,
  P.predecessorDrop,
  ...FINISH,
];

/**
 * Where each delivery, publication and quality cut point is crossed: each place (a flow,
 * the command that runs the same use case in-process) with every cut point it can reach
 * from some state it acts on. Exactly this is what test/integration/cut-point-reach-delivery.test.ts
 * sees fire, scenario by scenario.
 */
const DELIVERY_PLACES: readonly CutPointPlace[] = [
  // A SQL route: the staged load, one publication transaction, the end.
  { flow: 'deliver-window', command: 'delivery run', crosses: [...EXTRACT, D.loadChunk, D.publishCommit, ...FINISH] },
  // A ClickHouse route: the stage loaded by INSERT, the candidate, one EXCHANGE, the observation, the predecessor dropped.
  {
    flow: 'publish-clickhouse',
    crosses: [...EXTRACT, P.loadInsert, ...CANDIDATE, ...DISPATCH, ...OBSERVATION, P.predecessorDrop, ...FINISH],
  },
  { flow: 'quality-observe', command: 'quality observe', crosses: [D.custodyAcquire, ...OBSERVATION] },
  { flow: 'quality-replay', command: 'quality replay', crosses: [Q.replayRead, P.observe] },
  // SQL: the journal decides; ClickHouse: the EXCHANGE proved by UUID, or fenced out by renaming the candidate.
  {
    flow: 'delivery-reconcile',
    command: 'delivery reconcile',
    crosses: [D.custodyAcquire, D.journalTransition, P.observe, P.commitRecord, P.fenceRename],
  },
  // A SQL publication from the stage; a ClickHouse candidate filled from the stage, dispatched, observed.
  // From a continuable PARTIAL_PROVED, first the unfinished parts (continue): claimed, extracted,
  // loaded (a SQL stage, or a ClickHouse stage by INSERT), journaled — in process by the
  // command, on its ContinueParts Map by the flow (whose results go to S3).
  { command: 'delivery resume', crosses: RESUME },
  { flow: 'delivery-resume', crosses: [...RESUME, LOCAL_CUT_POINTS.mapRunResultWrite] },
  // The stage (and a ClickHouse candidate, by UUID) dropped; custody released RETIRED. A stage
  // created but never journaled (a crash between its CREATE and its record) is found by its
  // derived name and owner, and journaled first, as create-staging would have.
  {
    flow: 'delivery-retire',
    command: 'delivery retire',
    crosses: [D.custodyAcquire, D.stagingRecord, D.dropStaging, D.custodyRelease, P.observe, P.predecessorDrop],
  },
  // Finished invocations past retention: their work objects deleted, then their released-index entries.
  { flow: 'delivery-expire', command: 'delivery expire', crosses: [D.expireDelete, D.expireForget] },
];

/** The generation-commit flow and its demo, an operator's object write, the recovery dispatcher. */
const OTHER_PLACES: readonly CutPointPlace[] = [
  { flow: 'commit-generation', crosses: Object.values(GENERATION_CUT_POINTS) },
  // Two fixed sources, written by the demo itself: always concatenated (never copied), never aborted.
  {
    command: 'demo generation',
    crosses: [
      GENERATION_CUT_POINTS.taskPut,
      GENERATION_CUT_POINTS.objectPut,
      GENERATION_CUT_POINTS.recordPut,
      GENERATION_CUT_POINTS.commitCas,
      GENERATION_CUT_POINTS.taskCleanup,
    ],
  },
  { command: 'object put', crosses: Object.values(OBJECT_CUT_POINTS) },
  // EventBridge -> Lambda, starting a recovering flow after a failure.
  { handler: 'functions/recovery/dispatch.ts', crosses: [RECOVERY_CUT_POINTS.start] },
];

const PLACES = [...DELIVERY_PLACES, ...STREAM_PLACES, ...OTHER_PLACES];

/** Every place listed as crossing `name`, as a catalogue row names them. */
function placesOf(name: string): Pick<CutPointInfo, 'flows' | 'commands' | 'handlers' | 'libraries'> {
  const at = PLACES.filter((p) => p.crosses.includes(name));
  const each = (field: 'flow' | 'command' | 'handler' | 'library') => [
    ...new Set(at.flatMap((p) => (p[field] ? [p[field]] : []))),
  ];
  return { flows: each('flow'), commands: each('command'), handlers: each('handler'), libraries: each('library') };
}

const REGISTRIES: ReadonlyArray<[CutPointInfo['subsystem'], Record<string, string>]> = [
  ['generation', GENERATION_CUT_POINTS],
  ['stream', STREAM_CUT_POINTS],
  ['stream', CURSOR_CUT_POINTS],
  ['delivery', DELIVERY_CUT_POINTS],
  // ClickHouse EXCHANGE publication.
  ['delivery', PUBLICATION_CUT_POINTS],
  ['quality', QUALITY_CUT_POINTS],
  ['objects', OBJECT_CUT_POINTS],
  // The local runner's own effect: a Distributed Map's ResultWriter (the delivery flows' part results).
  ['local', LOCAL_CUT_POINTS],
  ['recovery', RECOVERY_CUT_POINTS],
];

function build(): CutPointInfo[] {
  const names = new Map<string, CutPointInfo['subsystem']>();
  for (const [subsystem, registry] of REGISTRIES)
    for (const name of Object.values(registry)) names.set(name, subsystem);
  return [...names]
    .map(([name, subsystem]) => ({ name, subsystem, ...placesOf(name) }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

export const CUT_POINTS: readonly CutPointInfo[] = build();

export const CUT_POINT_NAMES: ReadonlySet<string> = new Set(CUT_POINTS.map((c) => c.name));
