import { stagingTableOf } from '../../domain/delivery/identifiers.js';
import { DELIVERY_CUT_POINTS } from '../cut-points.js';
import type { DeliveryDeps } from '../deps.js';
import { readInvocation } from '../journal/records.js';
import { recordFacts } from '../journal/transition.js';
import { loadForStep, output, ownerBindingOf, parseStepInput, transitionIdOf, type StepOutput } from './common.js';
import { rereadOnStale } from './carried.js';
import { dropOrphanStage } from './orphan-stage.js';

/**
 * Step 2: create the owned stage (name derived from the invocation, beside the target
 * table, owner binding derived from the seal) and journal its exact object id and owner
 * binding — still in EMPTY_STAGING, at `delivery.staging.record`. Acts only in
 * EMPTY_STAGING without a recorded stage. A crash between CREATE and the journal write is
 * repaired by the re-run: createStaging returns the existing stage by exact identity.
 *
 * The CREATE is DDL in the target, which the custody fence does not condition: a fenced
 * creator (zombie, duplicate invocation, stale carried state) may CREATE after retire or
 * cleanup dropped the stage. So after the CREATE the step looks at the journal again (the
 * record its journal write left, or a fresh read when the write refused) and drops its
 * stage when no live session can use it (orphan-stage.ts). A step that finds the journal
 * terminal sweeps the derived stage too, so a retry finishes a sweep that crashed.
 */
async function createStagingOnce(input: unknown, deps: DeliveryDeps): Promise<StepOutput> {
  const step = parseStepInput(input);
  const { record, ref, custody: heldCustody } = await loadForStep(step, deps);
  if (record.state !== 'EMPTY_STAGING' || record.facts.staging) {
    if (!step.known) await dropOrphanStage(deps, record);
    return output(step, record, false);
  }
  const custody = await heldCustody();
  const targetTable = deps.route.route.target.table;
  const stage = stagingTableOf(record.invocationId, targetTable);
  const owner = ownerBindingOf(record.sealed);
  const created = await deps.target.createStaging({
    invocationId: record.invocationId,
    staging: { schema: stage.schema, table: stage.name },
    likeTable: { schema: targetTable.schema, table: targetTable.name },
    ownerBinding: owner,
  });
  let result;
  try {
    result = await recordFacts(deps.ports, ref, {
      state: 'EMPTY_STAGING',
      fence: step.fence,
      transitionId: transitionIdOf('create-staging', record.invocationId),
      patch: { staging: { table: created.table, objectId: created.objectId, owner }, ownedStagesRecorded: true },
      cutPoint: DELIVERY_CUT_POINTS.stagingRecord,
      known: { invocation: record, custody },
    });
  } catch (error) {
    // Refused (fenced, stale, terminal) or unknown: the journal as it is now decides. A
    // sweep that fails surfaces instead of the refusal, so the flow's Retry runs the step
    // again, and the retry (reading a terminal journal) sweeps.
    await dropOrphanStage(deps, await readInvocation(deps.ports, ref), created);
    throw error;
  }
  if (await dropOrphanStage(deps, result.invocation, created)) return output(step, result.invocation, false, custody);
  return output(step, result.invocation, !result.alreadyApplied, custody);
}

/** The step, deciding again from the journal when it refused or did nothing on a carried state (steps/carried.ts). */
export const createStaging = rereadOnStale(createStagingOnce);
