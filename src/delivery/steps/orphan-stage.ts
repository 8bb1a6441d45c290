import { stagingTableOf } from '../../domain/delivery/identifiers.js';
import { isTerminal } from '../../domain/delivery/journal-states.js';
import type { StagingRef } from '../../domain/delivery/target-types.js';
import type { DeliveryDeps } from '../deps.js';
import type { InvocationRecord } from '../journal/records.js';
import { ownerBindingOf } from './common.js';

/**
 * No owned stage outlives the journal that could use it (issue #13). The stage is DDL in
 * the SQL target, which the authority's custody fence cannot condition: a fenced creator
 * (a zombie or duplicate CreateStaging invocation, a stale carried state) can CREATE after
 * retire or cleanup dropped the stage. So the creator checks the journal AFTER its CREATE
 * and drops what it holds when no live session can ever use it:
 * - the journal is terminal (RETIRED, CUSTODY_RELEASED): absence was proved, nothing loads
 *   or publishes again;
 * - the journal records another object as the owned stage: every later step and recovery
 *   acts on the recorded object id only (`stagingRefOf`), so this one is nobody's.
 * A journal still in EMPTY_STAGING without a recorded stage is left alone: the session
 * holding custody adopts the stage by exact identity (create-staging `created: false`, or
 * retire's observation) and drops it itself.
 * The drop is `target.dropStaging` (exact object id and owner marker, repeat-safe); with
 * `created` undefined (a step that found the journal terminal, retire after RETIRED) the
 * stage is observed under its derived name first. Returns whether this call dropped one.
 */
export async function dropOrphanStage(
  deps: Pick<DeliveryDeps, 'target' | 'route'>,
  record: InvocationRecord,
  created?: StagingRef,
): Promise<boolean> {
  const recorded = record.facts.staging;
  const orphaned =
    isTerminal(record.state) ||
    (created !== undefined && recorded !== undefined && recorded.objectId !== created.objectId);
  if (!orphaned) return false;
  const stage = created ?? (await observedStage(deps, record));
  if (!stage) return false;
  return (await deps.target.dropStaging(stage)).dropped;
}

async function observedStage(
  deps: Pick<DeliveryDeps, 'target' | 'route'>,
  record: InvocationRecord,
): Promise<StagingRef | undefined> {
  const name = stagingTableOf(record.invocationId, deps.route.route.target.table);
  const table = { schema: name.schema, table: name.name };
  const owner = ownerBindingOf(record.sealed);
  const seen = await deps.target.observeStaging(table, { invocationId: record.invocationId, owner });
  return seen.status === 'OURS'
    ? { table, objectId: seen.objectId, invocationId: record.invocationId, owner }
    : undefined;
}
