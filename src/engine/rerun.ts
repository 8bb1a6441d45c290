import { setTimeout as sleep } from 'node:timers/promises';

/**
 * What a flow's Retry does, for use cases called in-process (the library form of a flow):
 * run a step again after a transient error. Safe only because every step reloads the
 * exact identity it acts on before it acts.
 */
export const TRANSIENT_ERRORS = ['Cutpoint.OutcomeUnknown', 'Cutpoint.WorkerCrashed', 'Cutpoint.EffectFailed'] as const;

export async function rerunTransient<T>(
  step: (attempt: number) => Promise<T>,
  transient: readonly string[] = TRANSIENT_ERRORS,
  attempts = 3,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await step(attempt);
    } catch (error) {
      if (!transient.includes((error as Error).name) || attempt >= attempts) throw error;
    }
  }
}

/**
 * The wait before round `round` (0-based) of a write or read that met contention (a
 * concurrent transaction on one of its items): random, up to 20 ms doubled per round,
 * capped at 320 ms, so racing callers spread out instead of meeting again.
 */
export async function contentionBackoff(round: number): Promise<void> {
  await sleep(Math.floor(Math.random() * 20 * 2 ** Math.min(round, 4)));
}
