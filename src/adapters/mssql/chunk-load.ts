import sql from 'mssql';
import { chunkJsonArray } from '../../domain/delivery/chunk-json.js';
import { LoadCountMismatchError } from '../../domain/delivery/target-errors.js';
import { assertColumns, assertSeq, assertStagingRef, TARGET_CUT_POINTS } from '../../domain/delivery/target-rules.js';
import type { ChunkReceipt } from '../../domain/delivery/target-types.js';
import type { LoadChunkRequest } from '../../ports/target.js';
import type { StageColumn } from './bulk-types.js';
import type { MssqlExecution } from './execution.js';
import { loadChunkBatch, prepareLoadBatch } from './load-statements.js';

/**
 * A chunk load on SQL Server: one READ COMMITTED transaction that replaces the seq's rows
 * with the chunk's (the verified JSONL as one JSON array read by OPENJSON with each stage
 * column's type, load-statements.ts), counts what it inserted against the declared rows,
 * and commits as the cut point `delivery.target.load-chunk`.
 */
export async function loadChunkIn(exec: MssqlExecution, request: LoadChunkRequest): Promise<ChunkReceipt> {
  assertStagingRef(request.staging);
  assertSeq(request.seq);
  const chunk = {
    seq: request.seq,
    columns: assertColumns(request.columns),
    json: chunkJsonArray(request),
    rows: request.rows,
  };
  const cutPoint = TARGET_CUT_POINTS.loadChunk;
  const pool = await exec.connected();
  const tx = new sql.Transaction(pool);
  try {
    await tx.begin(sql.ISOLATION_LEVEL.READ_COMMITTED);
  } catch (error) {
    throw exec.definite(cutPoint, error);
  }
  let committed = false;
  try {
    try {
      const stage = (await exec.run(tx, prepareLoadBatch(request.staging))).recordset as StageColumn[];
      const loaded = (await exec.run(tx, loadChunkBatch(request.staging, chunk, stage))).recordset as Array<{
        inserted: string | number;
      }>;
      const inserted = Number(loaded[0]?.inserted);
      if (inserted !== chunk.rows) throw new LoadCountMismatchError(chunk.seq, chunk.rows, inserted);
    } catch (error) {
      throw exec.definite(cutPoint, error);
    }
    await exec.faults.at(cutPoint, async () => {
      try {
        await tx.commit();
        committed = true;
      } catch (error) {
        throw exec.atCommit(cutPoint, error);
      }
    });
    committed = true;
  } finally {
    // crash-before (or a definite failure, a count mismatch) leaves the transaction open: roll it back.
    if (!committed) await tx.rollback().catch(() => undefined);
  }
  return { seq: chunk.seq, rows: chunk.rows, digest: request.sha256 };
}
