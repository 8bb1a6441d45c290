import { describeSchedules } from '../support/sched/vitest-schedules.js';
import { deliveryScenario } from './scenarios/delivery.js';

/** The delivery scenario's CI seeds 121-180, a third of them on another worker (delivery: 1-60, delivery-more: 61-120). */
describeSchedules(deliveryScenario, 60, 121);
