import { CUT_POINTS } from '../cut-points.js';
import type { SelectedRoute } from '../domain/delivery/manifest-types.js';
import { planDrills, type Drill, type DrillChoice } from '../domain/gameday/drill-plan.js';
import type { GamedayDriver } from '../ports/gameday-driver.js';
import { runDeliveryDrill } from './delivery-drill.js';
import { runGenerationDrill } from './generation-drill.js';
import { MAINTENANCE_FLOWS, runMaintenanceDrill } from './maintenance-drill.js';
import { runStreamDrill } from './stream-drill.js';
import type { DrillWorld } from './drill-world.js';
import { summarize, type DrillReport, type GamedayReport } from './report.js';

/**
 * `cutpoint gameday`: every cut point the drilled flows cross (the catalogue's, src/cut-points.ts)
 * armed in turn on the driver's runtime, each resolved by the recovery an operator gets and
 * then checked (docs/testing.md "Game day"). Drills run one after another, each on state of its own
 * (a fresh delivery invocation, a fresh generation root, a fresh stream lane for an append
 * or a lane's maintenance), so one
 * drill's leftovers would show in the next one's checks.
 */

/** The flows a game day drills; deliver-window needs the route. */
export const GAMEDAY_FLOWS = ['deliver-window', 'commit-generation', 'stream-append', ...MAINTENANCE_FLOWS] as const;
export type GamedayFlow = (typeof GAMEDAY_FLOWS)[number];

export interface GamedayPlan {
  flows: readonly GamedayFlow[];
  choice: DrillChoice;
  /** The route deliver-window delivers (required when it is drilled). */
  delivery?: { route: SelectedRoute; manifestText: string; selector: string };
}

const RUNNERS: Record<GamedayFlow, (w: DrillWorld, plan: GamedayPlan, drill: Drill) => Promise<DrillReport>> = {
  'deliver-window': (w, plan, drill) => runDeliveryDrill({ ...w, ...plan.delivery!, observers: w.observers! }, drill),
  'commit-generation': (w, _plan, drill) => runGenerationDrill(w, drill),
  'stream-append': (w, _plan, drill) => runStreamDrill(w, drill),
  'stream-trim': (w, _plan, drill) => runMaintenanceDrill(w, drill),
  'stream-materialize': (w, _plan, drill) => runMaintenanceDrill(w, drill),
  'stream-compact': (w, _plan, drill) => runMaintenanceDrill(w, drill),
  'stream-gc': (w, _plan, drill) => runMaintenanceDrill(w, drill),
  'stream-maintain': (w, _plan, drill) => runMaintenanceDrill(w, drill),
};

export async function runGameday(
  driver: GamedayDriver,
  plan: GamedayPlan,
  progress: (line: string) => void,
): Promise<GamedayReport> {
  if (plan.flows.includes('deliver-window') && !plan.delivery)
    throw new Error('a game day of deliver-window needs the route it delivers');
  const ports = await driver.ports();
  const observers = plan.delivery ? await driver.openObservers(plan.delivery.route) : undefined;
  const world: DrillWorld = { driver, ports, progress, ...(observers ? { observers } : {}) };
  const reports: DrillReport[] = [];
  try {
    for (const flow of plan.flows) {
      const crossed = CUT_POINTS.filter((c) => c.flows.includes(flow)).map((c) => c.name);
      const drills = planDrills(flow, crossed, plan.choice);
      progress(`gameday: ${flow}, ${drills.length} drills on the ${driver.kind} runtime`);
      for (const [i, drill] of drills.entries()) {
        const report = await RUNNERS[flow](world, plan, drill);
        reports.push(report);
        const violated = report.invariants.filter((x) => !x.held).map((x) => x.name);
        progress(
          `gameday: ${i + 1}/${drills.length} ${drill.spec} → ${report.finalState}, ${violated.length ? `VIOLATED ${violated.join(', ')}` : 'every invariant held'}`,
        );
      }
    }
  } finally {
    await observers?.close();
  }
  return summarize(driver.kind, plan.delivery?.route.name, reports);
}
