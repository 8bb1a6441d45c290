import { describeSchedules } from '../support/sched/vitest-schedules.js';
import { publicationScenario } from './scenarios/publication.js';

/** The publish-clickhouse and quality-observe flows under the deterministic scheduler (test/sched/scenarios/publication.ts). */
// 20: a schedule costs ~1.5-2 s idle (a whole publication on the chdb host over HTTP plus the real bounded-reader
// child per observation), 3.8 s on a loaded machine (151 s for 40 beside a 2-worker soak); the soak runs the rest.
describeSchedules(publicationScenario, 20);
