import type { Scenario } from '../../support/sched/scenario.js';
import { FAULT_CHOICES } from '../../support/sched/scheduler.js';
import { finish, newHistory, SCHED_WAIT, startDelivery, startOperator } from './delivery-actors.js';
import { checkDelivery } from './delivery-check.js';
import { closeDeliveryWorld, openDeliveryWorld, scheduleRoute, type DeliveryWorld } from './delivery-world.js';

/**
 * Bounded delivery and its recovery (docs/rules.md#recovery-actions) under the scheduler: the deliver-window
 * flow over chdb and embedded PostgreSQL (a window of 1-3 chunks into a table of its own),
 * zombie and duplicate Task invocations, a duplicate StartExecution, the recovery
 * dispatcher (the failure event delivered twice in some schedules) starting
 * delivery-reconcile, and an operator running the permitted recovery command concurrently.
 * Actors: delivery-actors.ts; the history checker: delivery-check.ts.
 */
export const deliveryScenario: Scenario<DeliveryWorld> = {
  name: 'delivery',
  actors: ['zombie', 'duplicate-invocation', 'duplicate-start', 'duplicate-event', 'operator-race'],
  options: { faultsAt: (cutPoint) => (cutPoint === SCHED_WAIT ? [] : FAULT_CHOICES) },
  open: openDeliveryWorld,
  close: closeDeliveryWorld,
  async plan(world, s) {
    const r = await scheduleRoute(world, s);
    const h = newHistory(world, s, r, s.rng.chance(0.3));
    startDelivery(s, r, h, s.rng.chance(0.3));
    if (s.rng.chance(0.5)) startOperator(world, s, r, h, s.rng.chance(0.5));
    return {
      settle: () => finish(world, s, r, h),
      check: () => checkDelivery(world, s, r, h),
    };
  },
};
