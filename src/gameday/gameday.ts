import { CUT_POINTS } from '../cut-points.js';
import type { SelectedRoute } from '../domain/delivery/manifest-types.js';
import { planDrills, type DrillChoice } from '../domain/gameday/drill-plan.js';
import type { GamedayDriver } from '../ports/gameday-driver.js';
import { runDeliveryDrill } from './delivery-drill.js';
import { summarize, type DrillReport, type GamedayReport } from './report.js';

/**
 * `cutpoint gameday`: every cut point the drilled flows cross (the catalogue's, src/cut-points.ts)
 * armed in turn on the driver's runtime, each resolved by the recovery an operator gets and
 * then checked (README "Game day"). Drills run one after another: each is a fresh
 * invocation of the route, so one drill's leftovers would show in the next one's checks.
 */

/** The flows a game day drills, with the route they deliver. */
export const GAMEDAY_FLOWS = ['deliver-window'] as const;
export type GamedayFlow = (typeof GAMEDAY_FLOWS)[number];

export interface GamedayPlan {
  flows: readonly GamedayFlow[];
  choice: DrillChoice;
  route: SelectedRoute;
  manifestText: string;
  selector: string;
}

export async function runGameday(
  driver: GamedayDriver,
  plan: GamedayPlan,
  progress: (line: string) => void,
): Promise<GamedayReport> {
  const ports = await driver.ports();
  const observers = await driver.openObservers(plan.route);
  const reports: DrillReport[] = [];
  try {
    for (const flow of plan.flows) {
      const crossed = CUT_POINTS.filter((c) => c.flows.includes(flow)).map((c) => c.name);
      const drills = planDrills(flow, crossed, plan.choice);
      progress(`gameday: ${flow}, ${drills.length} drills on the ${driver.kind} runtime`);
      for (const [i, drill] of drills.entries()) {
        const report = await runDeliveryDrill(
          {
            driver,
            ports,
            observers,
            route: plan.route,
            manifestText: plan.manifestText,
            selector: plan.selector,
            progress,
          },
          drill,
        );
        reports.push(report);
        progress(
          `gameday: ${i + 1}/${drills.length} ${drill.spec} → ${report.finalState}, ${
            report.held
              ? 'every invariant held'
              : `VIOLATED ${report.invariants
                  .filter((x) => !x.held)
                  .map((x) => x.name)
                  .join(', ')}`
          }`,
        );
      }
    }
  } finally {
    await observers.close();
  }
  return summarize(driver.kind, plan.route.name, reports);
}
