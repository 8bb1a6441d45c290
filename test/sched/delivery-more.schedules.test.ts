import { describeSchedules } from '../support/sched/vitest-schedules.js';
import { deliveryScenario } from './scenarios/delivery.js';

/** The delivery scenario's CI seeds 61-120, in a file of their own so the two halves run side by side. */
describeSchedules(deliveryScenario, 60, 61);
