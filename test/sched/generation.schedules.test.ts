import { describeSchedules } from '../support/sched/vitest-schedules.js';
import { generationScenario } from './scenarios/generation.js';

/** The generation-commit flow under the deterministic scheduler (test/sched/scenarios/generation.ts). */
describeSchedules(generationScenario, 160);
