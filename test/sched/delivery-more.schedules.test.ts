import { describeSchedules } from '../support/sched/vitest-schedules.js';
import { deliveryScenario } from './scenarios/delivery.js';

/**
 * The delivery scenario's CI seeds 61-120, in a file of their own so the two halves run side
 * by side; pinned, the 10,000-schedule soak's finds: 1093 and 1224 (retire's look after
 * RETIRED lost its drop request, leaving a zombie's stage), 1417 and 1805 (retire crashed
 * between RETIRED and that look; the operator's re-run is the repeated retire).
 */
describeSchedules(deliveryScenario, 60, 61, [1093, 1224, 1417, 1805]);
