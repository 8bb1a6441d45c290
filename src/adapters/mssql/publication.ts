import type sql from 'mssql';
import { EffectFailedError, IdentityConflictError } from '../../domain/errors.js';
import { PublicationRefusedError } from '../../domain/delivery/target-errors.js';
import {
  assertPublishRequest,
  assertStagingRef,
  receiptMatches,
  receiptOfRecord as toReceipt,
  TARGET_CUT_POINTS,
  type ReceiptRecord,
} from '../../domain/delivery/target-rules.js';
import type { PublicationReceipt, PublishRequest, TableRef } from '../../domain/delivery/target-types.js';
import type { PublishResult, TableDescription } from '../../ports/target.js';
import type { StageColumn } from './bulk-types.js';
import type { MssqlExecution } from './execution.js';
import { publishBatch } from './publish-statements.js';
import { mssqlSwapPlanOf, type ClusteredKeyRow, type MssqlSwapPlanning, type PartitionLayoutRow } from './swap-plan.js';
import { partitionLayoutStatement } from './swap-statements.js';

/**
 * A publication on SQL Server: the target's columns checked, the partition switch planned
 * (swap-plan.ts) where the target allows it, then one batch that publishes and writes the
 * receipt as the cut point `delivery.publish.commit`. A concurrent publisher of the same
 * invocation that won the receipt's key decides by its receipt.
 */
export async function publishIn(
  exec: MssqlExecution,
  target: {
    describeTable(table: TableRef): Promise<TableDescription>;
    probeReceipt(id: string): Promise<PublicationReceipt | undefined>;
  },
  receipts: TableRef,
  lockTimeoutMs: number,
  request: PublishRequest,
): Promise<PublishResult> {
  assertPublishRequest(request);
  assertStagingRef(request.staging);
  const described = await target.describeTable(request.target);
  const targetColumns = described.columns.map((c) => c.name);
  for (const k of [request.timeColumn, ...request.keyColumns]) {
    if (!targetColumns.includes(k)) throw new PublicationRefusedError(`target has no column ${k}`);
  }
  const planning = await swapPlanning(exec, request);
  const swap = 'plan' in planning ? planning.plan : undefined;
  let result: sql.IResult<unknown>;
  try {
    result = await exec.mutate(
      TARGET_CUT_POINTS.publishCommit,
      publishBatch(request, receipts, targetColumns, lockTimeoutMs, swap),
    );
  } catch (error) {
    // A concurrent publisher of the same invocation won the receipt's key: its receipt decides.
    if (
      error instanceof EffectFailedError &&
      [2627, 2601].includes((error.cause as { number?: number } | undefined)?.number ?? 0)
    ) {
      const receipt = await target.probeReceipt(request.invocationId);
      if (receipt) return existing(receipt, request);
    }
    throw error;
  }
  const row = result.recordset?.[0] as (ReceiptRecord & { applied: boolean }) | undefined;
  if (!row) throw new EffectFailedError(TARGET_CUT_POINTS.publishCommit, 'the publication batch returned no receipt');
  const receipt = toReceipt(row);
  return row.applied
    ? { receipt, applied: true, ...('declined' in planning ? { swapDeclined: planning.declined } : {}) }
    : existing(receipt, request);
}

/** replace_window into a target partitioned on the time column: can the stage be switched in (swap-plan.ts)? */
async function swapPlanning(exec: MssqlExecution, request: PublishRequest): Promise<MssqlSwapPlanning> {
  const result = await exec.read(
    partitionLayoutStatement(request.target, request.staging, request.timeColumn, request.window),
  );
  const sets = result.recordsets as unknown as [PartitionLayoutRow[], ClusteredKeyRow[], StageColumn[]];
  const planning = mssqlSwapPlanOf(sets[0]?.[0], sets[1] ?? [], sets[2] ?? []);
  return request.mode === 'merge' && !('partitioned' in planning)
    ? { declined: 'merge publishes set-based' }
    : planning;
}

function existing(receipt: PublicationReceipt, request: PublishRequest): PublishResult {
  if (!receiptMatches(receipt, request)) {
    throw new IdentityConflictError(
      'delivery.receipt_identity_conflict',
      `a different publication receipt exists for invocation ${request.invocationId}`,
    );
  }
  return { receipt, applied: false };
}
