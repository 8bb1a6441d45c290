import { stagingTableOf } from '../../domain/delivery/identifiers.js';
import { DELIVERY_CUT_POINTS } from '../cut-points.js';
import type { DeliveryDeps } from '../deps.js';
import { recordFacts } from '../journal/transition.js';
import { loadForStep, output, ownerBindingOf, parseStepInput, transitionIdOf, type StepOutput } from './common.js';
import { rereadOnStale } from './carried.js';

/**
 * Step 2: create the owned stage (name derived from the invocation, beside the target
 * table, owner binding derived from the seal) and journal its exact object id and owner
 * binding — still in EMPTY_STAGING, at `delivery.staging.record`. Acts only in
 * EMPTY_STAGING without a recorded stage. A crash between CREATE and the journal write is
 * repaired by the re-run: createStaging returns the existing stage by exact identity.
 */
async function createStagingOnce(input: unknown, deps: DeliveryDeps): Promise<StepOutput> {
  const step = parseStepInput(input);
  const { record, ref, custody: heldCustody } = await loadForStep(step, deps);
  if (record.state !== 'EMPTY_STAGING' || record.facts.staging) return output(step, record, false);
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
  const result = await recordFacts(deps.ports, ref, {
    state: 'EMPTY_STAGING',
    fence: step.fence,
    transitionId: transitionIdOf('create-staging', record.invocationId),
    patch: { staging: { table: created.table, objectId: created.objectId, owner }, ownedStagesRecorded: true },
    cutPoint: DELIVERY_CUT_POINTS.stagingRecord,
    known: { invocation: record, custody },
  });
  return output(step, result.invocation, !result.alreadyApplied, custody);
}

/** The step, deciding again from the journal when it refused or did nothing on a carried state (steps/carried.ts). */
export const createStaging = rereadOnStale(createStagingOnce);
