import type { Scenario } from '../../support/sched/scenario.js';
import { generationScenario } from './generation.js';
import { publicationScenario } from './publication.js';

/** Every scenario the scheduler explores: the soak's round-robin, in this order. */
export const SCENARIOS: ReadonlyArray<Scenario<never>> = [generationScenario as Scenario<never>, publicationScenario as Scenario<never>];
