import type { FaultKind } from '../../src/domain/faults.js';
import type { TestStores } from './emulators.js';

/** Runs one call with a fault armed at a cut point; returns 'ok' or the error's stable name. */
export async function firstAttempt(
  faults: TestStores['faults'],
  cutPoint: string,
  kind: FaultKind,
  run: () => Promise<unknown>,
): Promise<string> {
  faults.arm(`${cutPoint}:${kind === 'delay' ? 'delay=50' : kind}`);
  try {
    await run();
    return 'ok';
  } catch (error) {
    return (error as { name?: string }).name ?? 'error';
  } finally {
    faults.disarm();
  }
}

/**
 * What a call that resolves its own UNKNOWN outcomes by exact reload reports after one
 * fault: crashes and definite failures surface; lost responses, lost requests and delays
 * are absorbed.
 */
export const EXPECTED_FIRST: Record<FaultKind, string> = {
  'crash-before': 'Cutpoint.WorkerCrashed',
  'crash-after': 'Cutpoint.WorkerCrashed',
  'lose-response': 'ok',
  fail: 'Cutpoint.EffectFailed',
  delay: 'ok',
  'lose-request': 'ok',
};
