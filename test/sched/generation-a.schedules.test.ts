import { describeSchedules } from '../support/sched/vitest-schedules.js';
import { generationScenario } from './scenarios/generation.js';

/** The generation-commit flow under the deterministic scheduler (test/sched/scenarios/generation.ts): seeds 1-300; generation-b runs 301-600 on another worker. */
describeSchedules(generationScenario, 300);
