/**
 * RetainedItems {Kind, State}: the gauge the retained-items sweep (src/operations/retained.ts)
 * returns, read from its result by the telemetry like the volumes (volumes.ts). Every count
 * of every run is put, zeros included: the alarms read absence as a stopped sweep.
 */

/** The sweep's step (registry handler operations/sweep-retained). */
export const RETAINED_STEP = 'OperationsSweepRetained';

export interface RetainedGauge {
  kind: string;
  state: string;
  count: number;
}

export function retainedOf(step: string, result: unknown): RetainedGauge[] {
  if (step !== RETAINED_STEP) return [];
  const counts = (result as { counts?: unknown } | null | undefined)?.counts;
  if (!Array.isArray(counts)) return [];
  return counts.filter(
    (c): c is RetainedGauge =>
      typeof c === 'object' &&
      c !== null &&
      typeof (c as RetainedGauge).kind === 'string' &&
      typeof (c as RetainedGauge).state === 'string' &&
      Number.isSafeInteger((c as RetainedGauge).count),
  );
}
