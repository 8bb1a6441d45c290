import type { Drill } from '../domain/gameday/drill-plan.js';
import { GENERATION_CUT_POINTS } from '../generation/cut-points.js';
import type { DrillRun } from '../ports/gameday-driver.js';
import { loadHead } from '../stream/lane-store.js';
import { DrillLane } from './drill-lane.js';
import type { DrillWorld } from './drill-world.js';
import { checkMaintenance, type MaintenanceFacts } from './maintenance-invariants.js';
import type { DrillReport } from './report.js';

/**
 * One drill of a stream maintenance flow (stream-trim, stream-materialize, stream-compact,
 * stream-gc, stream-maintain): a lane of the drill's own put into the state that flow acts on
 * (drill-lane.ts), the flow run with the drill's fault armed, then, faults off, what an
 * operator gets for these flows: each is repeat-safe (every effect settled by exact identity
 * on a re-run), so the same input runs again — the next run the schedule or the operator
 * starts — until one succeeds (a WAL object the drill let go bad restored first: see
 * `recover`). Then the same input once more (it must find nothing left to do) and the
 * invariants (maintenance-invariants.ts).
 */

const G = GENERATION_CUT_POINTS;
/** Re-runs of one input before a drill gives up on converging. */
const MAX_RERUNS = 4;
/**
 * How long the first of two racing compactions is held before registering its task: the
 * other plans, registers and commits meanwhile (a few requests locally; far less than this).
 * On a deployed stage each Lambda counts its own hits, so both may be held: both have still
 * planned before either registered, and the one that prepares second loses the slot.
 */
const RACE_HOLD_MS = 1_000;

export const MAINTENANCE_FLOWS = [
  'stream-trim',
  'stream-materialize',
  'stream-compact',
  'stream-gc',
  'stream-maintain',
] as const;
export type MaintenanceFlow = (typeof MAINTENANCE_FLOWS)[number];

/** The lane in its state and the drilled runs' inputs (run side by side under the fault). */
interface Shaped {
  lane: DrillLane;
  inputs: unknown[];
  /** A rule armed with the drill's own to shape a race (it fires once; not the drill's fault). */
  shaping?: string;
  /** Puts back the exact bytes of a copy the drill let go bad. */
  restore?: () => Promise<void>;
  /** stream-trim's target. */
  trimTo?: number;
}

/**
 * Per flow, the lane each drill starts from, so that its cut point is crossed: batches of two
 * records at [0, 2), [2, 4), …; for generation.abort.cas a copy that does not verify (the
 * middle range's WAL object gone bad) or, in stream-compact, two runs racing over one start
 * with different maxRanges (the one held at its task's registration loses the slot, its
 * generation aborted); for GC, every fate at once — a trimmed range, an orphan, copies a
 * compaction superseded, live ranges and a crashed reader's expired lease.
 */
const SHAPES: Record<MaintenanceFlow, (c: DrillWorld, drill: Drill) => Promise<Shaped>> = {
  async 'stream-trim'(c) {
    const lane = await DrillLane.open(c, 3);
    await lane.setup('trim to 2', 'stream-trim', { ...lane.ref, to: 2 });
    return { lane, inputs: [{ ...lane.ref, to: 4 }], trimTo: 4 };
  },
  async 'stream-materialize'(c, drill) {
    const lane = await DrillLane.open(c, 3);
    const bad = drill.cutPoint === G.abortCas ? await lane.rot(lane.acked[1]!) : undefined;
    return { lane, inputs: [lane.ref], ...(bad ? { restore: bad.restore } : {}) };
  },
  async 'stream-compact'(c, drill) {
    const lane = await DrillLane.open(c, 4);
    if (drill.cutPoint !== G.abortCas) return { lane, inputs: [{ ...lane.ref, maxRanges: 3 }] };
    return {
      lane,
      inputs: [
        { ...lane.ref, maxRanges: 3 },
        { ...lane.ref, maxRanges: 2 },
      ],
      shaping: `${G.taskPut}:delay=${RACE_HOLD_MS}`,
    };
  },
  async 'stream-gc'(c) {
    const lane = await DrillLane.open(c, 4);
    await lane.orphan();
    await lane.setup('materialize', 'stream-materialize', lane.ref);
    await lane.setup('trim to 2', 'stream-trim', { ...lane.ref, to: 2 });
    await lane.setup('compact', 'stream-compact', { ...lane.ref, maxRanges: 2 });
    await lane.crashedReader();
    // Grace 0: every orphan and superseded copy is collectible now, as a trimmed one always is.
    return { lane, inputs: [{ ...lane.ref, grace: '0s' }] };
  },
  async 'stream-maintain'(c, drill) {
    const lane = await DrillLane.open(c, 4);
    await lane.orphan();
    await lane.setup('trim to 2', 'stream-trim', { ...lane.ref, to: 2 });
    await lane.crashedReader();
    const bad = drill.cutPoint === G.abortCas ? await lane.rot(lane.acked[2]!) : undefined;
    // Its GC runs with the deployed grace (CUTPOINT_GC_GRACE, 24h by default): the trimmed range is collected at once.
    return { lane, inputs: [{ lanes: [lane.ref] }], ...(bad ? { restore: bad.restore } : {}) };
  },
};

export async function runMaintenanceDrill(c: DrillWorld, drill: Drill): Promise<DrillReport> {
  const flow = drill.flow as MaintenanceFlow;
  c.progress(`drill ${drill.spec}`);
  const shaped = await SHAPES[flow](c, drill);
  const { lane } = shaped;
  c.progress(`  lane ${lane.ref.stream}/${lane.ref.partition} ready`);
  const trimBefore = (await loadHead(c.ports, lane.ref)).trimOffset;
  const armed = await c.driver.arm(shaped.shaping ? `${drill.spec},${shaped.shaping}` : drill.spec);
  let fired: number | undefined;
  try {
    await Promise.all(shaped.inputs.map((input) => lane.run(flow, flow, input)));
  } finally {
    fired = await armed.disarm();
  }
  // The shaping rule fired once (the race's held registration): the rest are the drill's fault.
  if (fired !== undefined && shaped.shaping) fired = Math.max(0, fired - 1);

  const converged: DrillRun[] = [];
  for (const input of shaped.inputs) converged.push(await recover(lane, flow, input, shaped.restore));

  const facts: MaintenanceFacts = {
    flow,
    ports: c.ports,
    lane,
    fired: fired ?? null,
    converged,
    // Once converged, the same input again finds nothing left to do.
    runOnceMore: () => lane.run(`${flow} once more`, flow, shaped.inputs[0]),
    trimBefore,
    ...(shaped.trimTo !== undefined ? { trimTo: shaped.trimTo } : {}),
  };
  const invariants = await checkMaintenance(facts);
  const failed = converged.find((r) => r.status !== 'SUCCEEDED');
  return {
    ...drill,
    fired: fired ?? null,
    trail: lane.trail,
    finalState: failed ? failed.status : 'SUCCEEDED',
    invariants,
    held: invariants.every((x) => x.held),
  };
}

/**
 * The next runs of the same input, faults off, until one succeeds (bounded). Always at least
 * one: a forward run that succeeded under the fault may have left work its next run finishes
 * (a task cleanup refused, a DELETE whose object is still there, closed as a late object).
 * Where the drill let a WAL object go bad, a failed run is answered as its cause says: the
 * object's exact bytes restored (docs/runbook/stream/QUARANTINED.md), once. A range whose
 * generation 0 aborted on it was passed by that run (src/stream/append/gen0-batch.ts), so
 * the next run goes on; a compaction later gives it its second copy.
 */
async function recover(
  lane: DrillLane,
  flow: MaintenanceFlow,
  input: unknown,
  restore: (() => Promise<void>) | undefined,
): Promise<DrillRun> {
  let last: DrillRun = { status: 'NOT_RUN' };
  for (let i = 0; i < MAX_RERUNS; i++) {
    last = await lane.run(`${flow} again`, flow, input);
    if (last.status === 'SUCCEEDED') break;
    await restore?.();
    restore = undefined;
  }
  return last;
}
