import { DELIVERY_CUT_POINTS } from './delivery/cut-points.js';
import { GENERATION_CUT_POINTS } from './generation/cut-points.js';
import { OBJECT_CUT_POINTS } from './objects/cut-points.js';
import { STREAM_CUT_POINTS } from './stream/cut-points.js';
import { CURSOR_CUT_POINT_COMMANDS, CURSOR_CUT_POINTS } from './stream/cursor/cut-points.js';
import { LOCAL_CUT_POINTS } from './local/cut-points.js';
import { OBSERVATION_CUT_POINTS, QUALITY_CUT_POINTS } from './quality/cut-points.js';
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

const DELIVERY_RUN = ['delivery run'];
const RECOVERY_FLOWS = ['delivery-reconcile', 'delivery-resume', 'delivery-retire'];
const RECOVERY_COMMANDS = ['delivery reconcile', 'delivery resume', 'delivery retire'];

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

/** Delivery cut points the recovery actions never hit (they are source-free and never extract or seal). */
const DELIVERY_RUN_ONLY: ReadonlySet<string> = new Set([
  DELIVERY_CUT_POINTS.seal,
  DELIVERY_CUT_POINTS.planPut,
  DELIVERY_CUT_POINTS.chunkPut,
  DELIVERY_CUT_POINTS.partReceipt,
  DELIVERY_CUT_POINTS.loadChunk,
  DELIVERY_CUT_POINTS.createStaging,
  DELIVERY_CUT_POINTS.stagingRecord,
]);

const OBSERVATION: ReadonlySet<string> = new Set(OBSERVATION_CUT_POINTS);

function build(): CutPointInfo[] {
  const all: Array<Omit<CutPointInfo, 'handlers'> & { handlers?: string[] }> = [];
  for (const name of Object.values(GENERATION_CUT_POINTS)) all.push({ name, subsystem: 'generation', flows: ['commit-generation'], commands: ['demo generation'] });
  for (const name of Object.values(STREAM_CUT_POINTS)) {
    const where = STREAM_WHERE[name.split('.')[1] ?? ''] ?? { flows: [], commands: [] };
    all.push({ name, subsystem: 'stream', ...where });
  }
  for (const name of Object.values(CURSOR_CUT_POINTS)) all.push({ name, subsystem: 'stream', flows: [], commands: CURSOR_CUT_POINT_COMMANDS[name] ?? [] });
  for (const name of new Set(Object.values(DELIVERY_CUT_POINTS))) {
    const runOnly = DELIVERY_RUN_ONLY.has(name);
    all.push({
      name,
      subsystem: 'delivery',
      flows: runOnly ? ['deliver-window'] : ['deliver-window', ...RECOVERY_FLOWS],
      commands: runOnly ? DELIVERY_RUN : [...DELIVERY_RUN, ...RECOVERY_COMMANDS],
    });
  }
  // ClickHouse EXCHANGE publication (the publish-clickhouse flow).
  for (const name of Object.values(PUBLICATION_CUT_POINTS)) all.push({ name, subsystem: 'delivery', flows: ['publish-clickhouse'], commands: [] });
  for (const name of Object.values(QUALITY_CUT_POINTS)) {
    // The governed observation also runs in the operator's quality-observe and in resume of a PUBLISHED operation.
    const observing = OBSERVATION.has(name);
    all.push({ name, subsystem: 'quality', flows: observing ? ['publish-clickhouse', 'quality-observe', 'delivery-resume'] : ['publish-clickhouse'], commands: [] });
  }
  for (const name of Object.values(OBJECT_CUT_POINTS)) all.push({ name, subsystem: 'objects', flows: [], commands: ['object put'] });
  // The local runner's own effect: a Distributed Map's ResultWriter (deliver-window's part results).
  all.push({ name: LOCAL_CUT_POINTS.mapRunResultWrite, subsystem: 'local', flows: ['deliver-window'], commands: DELIVERY_RUN });
  // The recovery dispatcher (EventBridge -> Lambda) starting a recovering flow after a failure.
  all.push({ name: RECOVERY_CUT_POINTS.start, subsystem: 'recovery', flows: [], commands: [], handlers: ['functions/recovery/dispatch.ts'] });
  return all.map((c) => ({ ...c, handlers: c.handlers ?? [] })).sort((a, b) => a.name.localeCompare(b.name));
}

export const CUT_POINTS: readonly CutPointInfo[] = build();

export const CUT_POINT_NAMES: ReadonlySet<string> = new Set(CUT_POINTS.map((c) => c.name));
