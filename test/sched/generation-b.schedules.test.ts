import { describeSchedules } from '../support/sched/vitest-schedules.js';
import { generationScenario } from './scenarios/generation.js';

/** The generation-commit flow under the deterministic scheduler (test/sched/scenarios/generation.ts): seeds 301-600; generation-a runs 1-300. */
describeSchedules(generationScenario, 300, 301);
