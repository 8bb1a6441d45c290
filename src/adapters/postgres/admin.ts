import pg from 'pg';
import { describePgError } from './outcome.js';

/**
 * A plain SQL session on a PostgreSQL server for tooling outside the delivery path (the
 * demo creates its target table and counts what landed). Not a TargetPort: no fence, no
 * receipt, no fault points. The connection string is never printed, also not in errors.
 */
export interface PostgresAdmin {
  /** Runs one statement (autocommit). */
  exec(sql: string, params?: readonly unknown[]): Promise<void>;
  /** Runs one query and returns its rows. */
  rows<T extends Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<T[]>;
  close(): Promise<void>;
}

export async function openPostgresAdmin(connectionString: string): Promise<PostgresAdmin> {
  const client = new pg.Client({ connectionString });
  client.on('error', () => undefined);
  const secrets = [connectionString];
  const guarded = async <T>(fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (error) {
      throw new Error(describePgError(error, secrets), { cause: error });
    }
  };
  await guarded(() => client.connect());
  let closing: Promise<void> | undefined;
  return {
    exec: (sql, params) => guarded(async () => void (await client.query(sql, params as unknown[] | undefined))),
    rows: <T extends Record<string, unknown>>(sql: string, params?: readonly unknown[]) =>
      guarded(async () => (await client.query<T>(sql, params as unknown[] | undefined)).rows),
    close: () => (closing ??= client.end().catch(() => undefined)),
  };
}
