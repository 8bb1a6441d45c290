import { describeSchedules } from '../support/sched/vitest-schedules.js';
import { deliveryScenario } from './scenarios/delivery.js';

/** Bounded delivery and its recovery under the deterministic scheduler (test/sched/scenarios/delivery.ts): seeds 1-60. */
describeSchedules(deliveryScenario, 60);
