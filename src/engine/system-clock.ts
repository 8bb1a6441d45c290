import type { Clock } from '../ports/clock.js';

/** The machine's clock: the Clock port's one real implementation. */
export const systemClock: Clock = { now: () => new Date() };
