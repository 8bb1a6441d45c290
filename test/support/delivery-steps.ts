import { expect } from 'vitest';
import { runDeliverySteps, type DeliveryRun } from '../../src/delivery/deliver-in-process.js';
import type { DeliveryDeps } from '../../src/delivery/deps.js';
import { extractLoadParts } from '../../src/delivery/parts/extract-load-parts.js';
import type { StepInput } from '../../src/delivery/steps/common.js';
import { createStaging } from '../../src/delivery/steps/create-staging.js';
import { planPartsStep } from '../../src/delivery/steps/plan-parts.js';
import { publish } from '../../src/delivery/steps/publish.js';
import { verifyEof } from '../../src/delivery/steps/verify-eof.js';
import type { DeliveryWorld } from './delivery-world.js';

/**
 * The in-process deliver-window steps from begin's output: the stage, the plan, every part
 * extracted and loaded, and (unless `last` says otherwise) EOF proved — the prefix most
 * recovery tests start from. Each step is handed begin's output, as a test that reuses it
 * would: a carried state that is stale is decided again from the journal.
 */
export async function stepsThrough(
  begun: StepInput,
  deps: DeliveryDeps,
  last: 'extract-load-parts' | 'verify-eof' = 'verify-eof',
): Promise<void> {
  await createStaging(begun, deps);
  await planPartsStep(begun, deps);
  await extractLoadParts(begun, deps);
  if (last === 'verify-eof') expect(await verifyEof(begun, deps)).toMatchObject({ state: 'VERIFIED_EOF' });
}

/** Publish whose COMMIT lands and whose worker crashes right after it: the receipt exists, the journal says VERIFIED_EOF. */
export async function publishCrashingAfterCommit(
  world: Pick<DeliveryWorld, 'targetFaults'>,
  begun: StepInput,
  deps: DeliveryDeps,
): Promise<void> {
  world.targetFaults.arm('delivery.publish.commit:crash-after');
  try {
    await expect(publish(begun, deps)).rejects.toMatchObject({ name: 'Cutpoint.WorkerCrashed' });
  } finally {
    world.targetFaults.disarm();
  }
}

/** The steps after begin with the publication COMMIT's answer lost once: the run stops in PUBLICATION_UNKNOWN, the receipt written. */
export async function runLosingCommitAnswer(
  world: Pick<DeliveryWorld, 'targetFaults'>,
  begun: StepInput,
  deps: DeliveryDeps,
): Promise<DeliveryRun> {
  world.targetFaults.arm('delivery.publish.commit:lose-response');
  try {
    const run = await runDeliverySteps(begun, deps);
    expect(run.state).toBe('PUBLICATION_UNKNOWN');
    return run;
  } finally {
    world.targetFaults.disarm();
  }
}
