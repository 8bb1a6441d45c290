import type pg from 'pg';
import { markerMatches } from '../../domain/delivery/target-rules.js';
import { StagingBindingChangedError } from '../../domain/delivery/target-errors.js';
import type { StagingRef, TableRef } from '../../domain/delivery/target-types.js';
import { LOOKUP_TABLE, quoteTable } from './sql.js';

/** The locks and identity rechecks every mutating PostgreSQL transaction of the target takes. */

export type Client = pg.PoolClient;

/** The body decides whether its work is committed (a mutation) or rolled back (nothing to do). */
export interface TxResult<T> {
  value: T;
  commit: boolean;
}

export async function lookup(
  client: Client,
  table: TableRef,
): Promise<{ objectId: string; marker: string | null } | undefined> {
  const result = await client.query<{ object_id: string; marker: string | null }>(LOOKUP_TABLE, [
    table.schema,
    table.table,
  ]);
  const row = result.rows[0];
  return row ? { objectId: row.object_id, marker: row.marker } : undefined;
}

export async function advisoryLock(client: Client, resource: string): Promise<void> {
  await client.query('SELECT pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtextextended($1, 0))', [resource]);
}

/** Locks the stage in `mode`, then rechecks its exact object id and owner marker. */
export async function recheckLocked(client: Client, staging: StagingRef, mode: string): Promise<void> {
  const before = await lookup(client, staging.table);
  if (!before) throw new StagingBindingChangedError(`${staging.table.schema}.${staging.table.table} is absent`);
  await client.query(`LOCK TABLE ${quoteTable(staging.table)} IN ${mode} MODE`);
  const after = await lookup(client, staging.table);
  if (!after || after.objectId !== staging.objectId) {
    throw new StagingBindingChangedError(
      `${staging.table.schema}.${staging.table.table} is not object ${staging.objectId}`,
    );
  }
  if (!markerMatches(after.marker, staging)) {
    throw new StagingBindingChangedError(
      `${staging.table.schema}.${staging.table.table} has a different owner binding`,
    );
  }
}
