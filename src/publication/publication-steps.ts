import { DELIVERY_STEPS, type StepList } from '../delivery/deliver-in-process.js';
import { inFlowOrder } from '../engine/flow-path.js';
import publishClickhouse from '../../statemachines/publish-clickhouse.asl.json' with { type: 'json' };
import { observeTarget } from '../quality/steps/observe-target.js';
import { prepareCapsule } from '../quality/steps/prepare-capsule.js';
import { cleanupPublication } from './steps/cleanup.js';
import { dispatch } from './steps/dispatch.js';
import { fillCandidate } from './steps/fill-candidate.js';

const deliveryStep = (name: string): StepList[number] => {
  const found = DELIVERY_STEPS.find(([n]) => n === name);
  if (!found) throw new Error(`bug: no delivery step ${name}`);
  return found;
};

/**
 * The publish-clickhouse flow's steps after begin, in its order (its success path, read from
 * the generated ASL: statemachines/flows/publish-clickhouse.ts), for the in-process runs
 * (resume, the CLI): the delivery's own steps through VerifyEof, then the candidate, the
 * capsule, the one EXCHANGE and the observation, then evidence and checkpoint (gated on the
 * COMPLETE capsule by the exchange mode's governance), and the publication's cleanup, which
 * drops the predecessor and retires the capsule. Never deliver-window's quality or publish
 * steps. The exchange mode's `steps` (exchange-mode.ts).
 */
export const PUBLICATION_STEPS: StepList = inFlowOrder<StepList[number]>(
  'publish-clickhouse',
  publishClickhouse,
  {
    'delivery/create-staging': deliveryStep('create-staging'),
    'delivery/plan-parts': deliveryStep('plan-parts'),
    'delivery/extract-load-part': deliveryStep('extract-load-parts'),
    'delivery/verify-eof': deliveryStep('verify-eof'),
    'publication/fill-candidate': ['fill-candidate', fillCandidate],
    'quality/prepare-capsule': ['prepare-capsule', prepareCapsule],
    'publication/dispatch': ['dispatch', dispatch],
    'quality/observe-target': ['observe-target', (input, deps) => observeTarget(input, deps)],
    'delivery/evidence': deliveryStep('evidence'),
    'delivery/checkpoint': deliveryStep('checkpoint'),
    'publication/cleanup': ['cleanup', cleanupPublication],
  },
  1,
);
