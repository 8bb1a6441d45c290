import { rereadOnStale } from '../../delivery/steps/carried.js';
import type { DeliveryDeps } from '../../delivery/deps.js';
import { QualityFailedError, TargetPendingError } from '../../domain/quality/errors.js';
import { observeTargetOnce, type ObserveOutput } from '../observe-target.js';
import { readerOf } from '../../publication/exchange-deps.js';
import type { TargetReader } from '../observe-reader.js';

/**
 * The ObserveTarget step (flow `publish-clickhouse`, after Dispatch): the use case
 * (src/quality/observe-target.ts) deciding again from the journal when it did nothing on a
 * carried state (steps/carried.ts). The reader is a second parameter; by default the one
 * the deps' exchange mode builds (src/publication/exchange-deps.ts `readerOf`: a Lambda's
 * forks its own bundle with its secrets and remaining time; a local run's, the generic
 * child entry connecting to the binding resolved from the environment).
 */
export async function observeTarget(input: unknown, deps: DeliveryDeps, reader?: TargetReader): Promise<ObserveOutput> {
  const tr = reader ?? (await readerOf(deps));
  return rereadOnStale((i: unknown, d: DeliveryDeps) => observeTargetOnce(i, d, tr))(input, deps);
}

/**
 * The flow's variant: anything but a COMPLETE capsule leaves as its stable error so the
 * state machine can catch it — Quality.TargetPending (a later identical invocation may
 * observe again), Quality.Failed (terminal), Quality.Incomplete (thrown by the use case:
 * the guard is kept).
 */
export async function observeTargetStep(
  input: unknown,
  deps: DeliveryDeps,
  reader?: TargetReader,
): Promise<ObserveOutput> {
  const out = await observeTarget(input, deps, reader);
  if (out.capsuleState === 'TARGET_PENDING') throw new TargetPendingError();
  if (out.capsuleState === 'FAILED') throw new QualityFailedError();
  return out;
}
