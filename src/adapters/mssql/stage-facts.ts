import sql from 'mssql';
import { assertStagingRef, scalarOf as scalar } from '../../domain/delivery/target-rules.js';
import { checkedFactsRequest } from '../../domain/delivery/staging-facts-request.js';
import { QualityCheckUnrunnableError } from '../../domain/delivery/target-errors.js';
import type { StagingFactsRequest, StagingRef } from '../../domain/delivery/target-types.js';
import type { StagingFacts } from '../../ports/target.js';
import { describeMssqlError, isMssqlUnrunnableStatement } from './connection.js';
import type { MssqlExecution } from './execution.js';
import { stagingFactsBatch } from './load-statements.js';
import { assertionStatement } from './sql-text.js';

/**
 * The quality facts of a stage (or of one part's seq range of it) in one READ COMMITTED
 * transaction that is always rolled back: rows, NULLs per not-null column, key duplicate
 * groups, and each operator assertion's scalar.
 */
export async function mssqlStagingFacts(
  exec: MssqlExecution,
  staging: StagingRef,
  facts: StagingFactsRequest,
): Promise<StagingFacts> {
  assertStagingRef(staging);
  const { keys, notNull, range } = checkedFactsRequest(facts);
  const pool = await exec.connected();
  const tx = new sql.Transaction(pool);
  try {
    await tx.begin(sql.ISOLATION_LEVEL.READ_COMMITTED);
  } catch (error) {
    throw exec.readFailure(error);
  }
  try {
    const counts = (await exec.run(tx, stagingFactsBatch(staging, keys, notNull, range))).recordset[0] as
      Record<string, unknown> | undefined;
    const assertions: Record<string, number | string | null> = {};
    for (const a of facts.assertions) {
      const result = await new sql.Request(tx).query(assertionStatement(a.sql, staging.table));
      const row = result.recordset?.[0] as Record<string, unknown> | undefined;
      assertions[a.name] = scalar(row ? Object.values(row)[0] : null);
    }
    const nulls: Record<string, number> = {};
    notNull.forEach((c, i) => (nulls[c] = Number(counts?.[`n${i}`] ?? 0)));
    return {
      rows: Number(counts?.row_count ?? 0),
      duplicateKeys: Number(counts?.duplicate_keys ?? 0),
      nulls,
      assertions,
    };
  } catch (error) {
    if (isMssqlUnrunnableStatement(error))
      throw new QualityCheckUnrunnableError(describeMssqlError(error, exec.secrets));
    throw exec.readFailure(error);
  } finally {
    // Always rolled back: an assertion can never change anything.
    await tx.rollback().catch(() => undefined);
  }
}
