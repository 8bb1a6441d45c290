import { describeSchedules } from '../support/sched/vitest-schedules.js';
import { publicationScenario } from './scenarios/publication.js';

/** The publish-clickhouse and quality-observe flows under the deterministic scheduler (test/sched/scenarios/publication.ts). */
// 40, not the 80 planned: a schedule costs ~1.5 s (measured mean, 2 cores shared), not 0.6 s — a whole publication
// (chdb host over HTTP) plus the real bounded-reader child per observation; 40 keep the planned ~50 s of npm test.
describeSchedules(publicationScenario, 40);
