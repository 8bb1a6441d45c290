import { DELIVERY_STEPS, type StepList } from '../delivery/deliver-in-process.js';
import { observeTarget } from '../quality/steps/observe-target.js';
import { prepareCapsule } from '../quality/steps/prepare-capsule.js';
import { cleanupPublication } from './steps/cleanup.js';
import { dispatch } from './steps/dispatch.js';
import { fillCandidate } from './steps/fill-candidate.js';

const step = (name: string): StepList[number] => {
  const found = DELIVERY_STEPS.find(([n]) => n === name);
  if (!found) throw new Error(`bug: no delivery step ${name}`);
  return found;
};

/**
 * The publish-clickhouse flow's steps in its order (statemachines/publish-clickhouse.asl.json),
 * for the in-process runs (resume, the CLI): the delivery's own steps through VerifyEof, then
 * the candidate, the capsule, the one EXCHANGE and the observation, then evidence and
 * checkpoint (gated on the COMPLETE capsule by the exchange mode's governance), and the
 * publication's cleanup, which drops the predecessor and retires the capsule. Never
 * deliver-window's quality or publish steps. The exchange mode's `steps` (exchange-mode.ts).
 */
export const PUBLICATION_STEPS: StepList = [
  step('create-staging'),
  step('plan-parts'),
  step('extract-load-parts'),
  step('verify-eof'),
  ['fill-candidate', fillCandidate],
  ['prepare-capsule', prepareCapsule],
  ['dispatch', dispatch],
  ['observe-target', (input, deps) => observeTarget(input, deps)],
  step('evidence'),
  step('checkpoint'),
  ['cleanup', cleanupPublication],
];
