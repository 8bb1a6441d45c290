import { describeSchedules } from '../support/sched/vitest-schedules.js';
import { publicationScenario } from './scenarios/publication.js';

/** The publish-clickhouse and quality-observe flows under the deterministic scheduler (test/sched/scenarios/publication.ts). */
describeSchedules(publicationScenario, 80);
