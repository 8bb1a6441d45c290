// STUB (helper D, round 2): the real ObserveTarget use case is written in parallel by another
// helper; the lead REPLACES this file at merge. It only keeps the publish-clickhouse flow and
// its handler compiling and lets the flow test assert that an unfinished observation ends in
// the flow's Quality.Incomplete Fail state.
import type { DeliveryDeps } from '../../delivery/deps.js';
import type { StepOutput } from '../../delivery/steps/common.js';
import { CutpointError } from '../../domain/errors.js';

export function observeTargetStep(_input: unknown, _deps: DeliveryDeps): Promise<StepOutput> {
  return Promise.reject(new CutpointError('Quality.Incomplete', 'quality.incomplete', 'observe not wired'));
}
