import { assertStagingRef, scalarOf as scalar } from '../../domain/delivery/target-rules.js';
import { checkedFactsRequest } from '../../domain/delivery/staging-facts-request.js';
import { QualityCheckUnrunnableError } from '../../domain/delivery/target-errors.js';
import type { StagingFactsRequest, StagingRef } from '../../domain/delivery/target-types.js';
import type { StagingFacts } from '../../ports/target.js';
import { recheckLocked } from './locks.js';
import { isPostgresUnrunnableStatement } from './outcome.js';
import { QUOTED_CHUNK, quoteColumn, quoteTable } from './sql.js';
import type { PgTransactions } from './transactions.js';

/**
 * The quality facts of a stage (or of one part's seq range of it), read in one read-only
 * transaction under the stage's identity recheck: rows, NULLs per not-null column, key
 * duplicate groups, and each operator assertion's scalar.
 */
export async function postgresStagingFacts(
  tx: PgTransactions,
  staging: StagingRef,
  facts: StagingFactsRequest,
): Promise<StagingFacts> {
  assertStagingRef(staging);
  const { keys, notNull, range } = checkedFactsRequest(facts);
  const table = quoteTable(staging.table);
  const where = range ? ` WHERE ${QUOTED_CHUNK} >= $1 AND ${QUOTED_CHUNK} < $2` : '';
  const bounds = range ? [range.from, range.to] : [];
  const probe = tx.run({ readOnly: true }, async (client) => {
    await recheckLocked(client, staging, 'ACCESS SHARE');
    const nullSums = notNull.map((c, i) => `sum(CASE WHEN ${quoteColumn(c)} IS NULL THEN 1 ELSE 0 END)::text AS n${i}`);
    const counts = await client.query<Record<string, string | null>>(
      `SELECT count(*)::text AS total${nullSums.length ? ', ' + nullSums.join(', ') : ''} FROM ${table}${where}`,
      bounds,
    );
    const row = counts.rows[0] ?? {};
    let duplicateKeys = 0;
    if (keys.length > 0) {
      const dup = await client.query<{ groups: string }>(
        `SELECT count(*)::text AS groups FROM (SELECT 1 FROM ${table}${where} GROUP BY ${keys.map(quoteColumn).join(', ')} HAVING count(*) > 1) d`,
        bounds,
      );
      duplicateKeys = Number(dup.rows[0]?.groups ?? 0);
    }
    const assertions: Record<string, number | string | null> = {};
    for (const a of facts.assertions) {
      const result = await client.query({ text: a.sql.split('{staging}').join(table), rowMode: 'array' });
      const first = (result.rows[0] as unknown[] | undefined)?.[0];
      assertions[a.name] = scalar(first);
    }
    const nulls: Record<string, number> = {};
    notNull.forEach((c, i) => (nulls[c] = Number(row[`n${i}`] ?? 0)));
    return { commit: false, value: { rows: Number(row.total ?? 0), duplicateKeys, nulls, assertions } };
  });
  return probe.catch((error: unknown) => {
    const cause = (error as { cause?: unknown }).cause;
    throw isPostgresUnrunnableStatement(cause) ? new QualityCheckUnrunnableError((error as Error).message) : error;
  });
}
