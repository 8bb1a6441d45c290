import { describeSchedules } from '../support/sched/vitest-schedules.js';
import { streamScenario } from './scenarios/stream.js';

/** The stream log under the deterministic scheduler (test/sched/scenarios/stream.ts): seeds 1-100; stream-b runs 101-200 on another worker. */
describeSchedules(streamScenario, 100, 1);
