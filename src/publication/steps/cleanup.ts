// STUB (helper D, round 2): the real publication cleanup (drop the predecessor P by UUID and the
// stage, prove absence, SUCCEEDED -> CUSTODY_RELEASED with the capsule's retirement leg) is
// written in parallel by another helper; the lead REPLACES this file at merge.
import type { DeliveryDeps } from '../../delivery/deps.js';
import type { StepOutput } from '../../delivery/steps/common.js';
import { CutpointError } from '../../domain/errors.js';

export function cleanupPublication(_input: unknown, _deps: DeliveryDeps): Promise<StepOutput> {
  return Promise.reject(new CutpointError('Quality.Incomplete', 'quality.incomplete', 'publication cleanup not wired'));
}
