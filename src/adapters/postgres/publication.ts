import { IdentityConflictError } from '../../domain/errors.js';
import { PublicationRefusedError, TargetObjectMissingError } from '../../domain/delivery/target-errors.js';
import {
  publicationLockOf,
  receiptMatches,
  receiptOfRecord as toReceipt,
  type ReceiptRecord,
} from '../../domain/delivery/target-rules.js';
import type { PublishResult } from '../../ports/target.js';
import type {
  PublicationMethod,
  PublicationReceipt,
  PublishRequest,
  TableRef,
} from '../../domain/delivery/target-types.js';
import {
  DESCRIBE_COLUMNS,
  keyJoin,
  quoteColumn,
  quoteIdent,
  quoteTable,
  RECEIPT_COLUMNS,
  RECEIPT_METHOD_MISSING,
  receiptTableDdl,
} from './sql.js';
import { advisoryLock, lookup, recheckLocked, type Client, type TxResult } from './locks.js';
import { planSwap, swapWindow } from './partition-swap.js';

/**
 * The publication transaction's body (run inside PostgresTarget's transaction, whose
 * COMMIT is `delivery.publish.commit`): the receipt first under the invocation's
 * publication lock; then the target locked EXCLUSIVE, the stage rechecked, its columns and
 * row count checked against the journal's proof, the window replaced (or merged), and the
 * receipt row inserted in the same transaction. A replace_window into a target partitioned
 * by range on the time column whose window is exactly one partition (or none yet) swaps the
 * stage in as that partition instead of copying rows (partition-swap.ts); the receipt
 * says which (`method`), and the result why a partitioned target did not swap.
 */
export async function publishBody(
  client: Client,
  request: PublishRequest,
  receipts: TableRef,
): Promise<TxResult<PublishResult>> {
  await client.query(receiptTableDdl(receipts));
  const legacy = await client.query<{ missing: boolean }>(RECEIPT_METHOD_MISSING, [quoteTable(receipts)]);
  if (legacy.rows[0]?.missing)
    await client.query(`ALTER TABLE ${quoteTable(receipts)} ADD COLUMN IF NOT EXISTS method text`);
  await advisoryLock(client, publicationLockOf(request.invocationId));
  const prior = await client.query<ReceiptRecord>(
    `SELECT ${RECEIPT_COLUMNS} FROM ${quoteTable(receipts)} AS r WHERE invocation_id = $1`,
    [request.invocationId],
  );
  if (prior.rows[0]) return { commit: false, value: existingPublication(toReceipt(prior.rows[0]), request) };

  const target = await lookup(client, request.target);
  if (!target) throw new TargetObjectMissingError(`table ${request.target.schema}.${request.target.table}`);
  const targetTable = quoteTable(request.target);
  // EXCLUSIVE: readers go on, other writers of the target wait for the publication.
  await client.query(`LOCK TABLE ${targetTable} IN EXCLUSIVE MODE`);
  await recheckLocked(client, request.staging, 'SHARE');

  const targetColumns = (await client.query<{ name: string }>(DESCRIBE_COLUMNS, [target.objectId])).rows.map(
    (c) => c.name,
  );
  const stageColumns = new Set(
    (await client.query<{ name: string }>(DESCRIBE_COLUMNS, [request.staging.objectId])).rows.map((c) => c.name),
  );
  const missing = targetColumns.filter((c) => !stageColumns.has(c));
  if (missing.length > 0) throw new PublicationRefusedError(`stage lacks target columns ${missing.join(', ')}`);
  for (const k of [request.timeColumn, ...request.keyColumns]) {
    if (!targetColumns.includes(k)) throw new PublicationRefusedError(`target has no column ${k}`);
  }

  const planning = await planSwap(client, request, target.objectId, request.staging.objectId);
  let method: PublicationMethod = 'set_based';
  if ('plan' in planning) {
    await swapWindow(client, request, planning.plan);
    method = 'partition_swap';
  } else {
    await copyWindow(client, request, targetColumns);
  }
  const inserted = await client.query<ReceiptRecord>(
    `INSERT INTO ${quoteTable(receipts)} AS r
       (invocation_id, target_schema, target_table, mode, window_start, window_end, rows, digest, staging_object_id, method)
     VALUES ($1, $2, $3, $4, $5::timestamptz, $6::timestamptz, $7, $8, $9, $10)
     RETURNING ${RECEIPT_COLUMNS}`,
    [
      request.invocationId,
      request.target.schema,
      request.target.table,
      request.mode,
      request.window.start.toISOString(),
      request.window.end.toISOString(),
      request.rows,
      request.digest,
      request.staging.objectId,
      method,
    ],
  );
  const declined = 'declined' in planning ? { swapDeclined: planning.declined } : {};
  return { commit: true, value: { receipt: toReceipt(inserted.rows[0]!), applied: true, ...declined } };
}

/** The set-based path: the row-count check, then DELETE + INSERT … SELECT (replace_window) or UPDATE + INSERT (merge). */
async function copyWindow(client: Client, request: PublishRequest, targetColumns: string[]): Promise<void> {
  const targetTable = quoteTable(request.target);
  const stage = quoteTable(request.staging.table);
  const count = await client.query<{ n: string }>(`SELECT count(*)::text AS n FROM ${stage}`);
  const staged = Number(count.rows[0]?.n ?? -1);
  if (staged !== request.rows)
    throw new PublicationRefusedError(`stage holds ${staged} rows, the journal proved ${request.rows}`);

  const cols = targetColumns.map(quoteIdent).join(', ');
  const time = quoteColumn(request.timeColumn);
  const bounds = [request.window.start.toISOString(), request.window.end.toISOString()];
  if (request.mode === 'replace_window') {
    const outside = await client.query<{ n: string }>(
      `SELECT count(*)::text AS n FROM ${stage} WHERE ${time} IS NULL OR ${time} < $1::timestamptz OR ${time} >= $2::timestamptz`,
      bounds,
    );
    if (Number(outside.rows[0]?.n) !== 0)
      throw new PublicationRefusedError(`${outside.rows[0]?.n} staged rows fall outside the window`);
    await client.query(
      `DELETE FROM ${targetTable} WHERE ${time} >= $1::timestamptz AND ${time} < $2::timestamptz`,
      bounds,
    );
    await client.query(`INSERT INTO ${targetTable} (${cols}) SELECT ${cols} FROM ${stage}`);
  } else {
    const keys = request.keyColumns.map(quoteColumn);
    const bad = await client.query<{ n: string }>(
      `SELECT (SELECT count(*) FROM ${stage} WHERE ${keys.map((k) => `${k} IS NULL`).join(' OR ')})
            + (SELECT count(*) FROM (SELECT 1 FROM ${stage} GROUP BY ${keys.join(', ')} HAVING count(*) > 1) d) AS n`,
    );
    if (Number(bad.rows[0]?.n) !== 0)
      throw new PublicationRefusedError('merge keys in the stage are null or not unique');
    const nonKeys = targetColumns.filter((c) => !request.keyColumns.includes(c));
    if (nonKeys.length > 0) {
      await client.query(
        `UPDATE ${targetTable} AS t SET ${nonKeys.map((c) => `${quoteIdent(c)} = s.${quoteIdent(c)}`).join(', ')}
           FROM ${stage} AS s WHERE ${keyJoin(request.keyColumns)}`,
      );
    }
    await client.query(
      `INSERT INTO ${targetTable} (${cols}) SELECT ${targetColumns.map((c) => `s.${quoteIdent(c)}`).join(', ')}
         FROM ${stage} AS s WHERE NOT EXISTS (SELECT 1 FROM ${targetTable} AS t WHERE ${keyJoin(request.keyColumns)})`,
    );
  }
}

/** A receipt already there: the publication's answer when it is this publication, else a conflict. */
export function existingPublication(receipt: PublicationReceipt, request: PublishRequest): PublishResult {
  if (!receiptMatches(receipt, request)) {
    throw new IdentityConflictError(
      'delivery.receipt_identity_conflict',
      `a different publication receipt exists for invocation ${request.invocationId}`,
    );
  }
  return { receipt, applied: false };
}
