import type { Scenario } from '../../support/sched/scenario.js';
import { deliveryScenario } from './delivery.js';
import { generationScenario } from './generation.js';
import { publicationScenario } from './publication.js';
import { streamScenario } from './stream.js';

/** Every scenario the scheduler explores: the soak's round-robin, in this order. */
export const SCENARIOS: ReadonlyArray<Scenario<never>> = [
  generationScenario as Scenario<never>,
  streamScenario as Scenario<never>,
  deliveryScenario as Scenario<never>,
  publicationScenario as Scenario<never>,
];
