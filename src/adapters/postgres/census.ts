import pg from 'pg';
import type { WindowCensus, WindowCensusPort, WindowCensusRequest } from '../../ports/window-census.js';
import { describePgError } from './outcome.js';
import { quoteColumn, quoteTable } from './sql.js';

/**
 * The window census of a PostgreSQL target (src/ports/window-census.ts): one read-only
 * query, identifiers validated and quoted, the window's bounds parameters. The connection
 * string is never printed, also not in errors.
 */
export function openPostgresCensus(connectionString: string): WindowCensusPort {
  const pool = new pg.Pool({ connectionString, max: 1 });
  pool.on('error', () => undefined);
  return {
    async census(request: WindowCensusRequest): Promise<WindowCensus> {
      const keys = request.keyColumns.map(quoteColumn);
      const time = quoteColumn(request.timeColumn);
      const sql = `SELECT count(*)::text AS rows, count(DISTINCT (${keys.join(', ')}))::text AS distinct_keys
                     FROM ${quoteTable(request.table)}
                    WHERE ${time} >= $1::timestamptz AND ${time} < $2::timestamptz`;
      try {
        const result = await pool.query<{ rows: string; distinct_keys: string }>(sql, [
          request.window.start.toISOString(),
          request.window.end.toISOString(),
        ]);
        const row = result.rows[0];
        return { rows: Number(row?.rows ?? 0), distinctKeys: Number(row?.distinct_keys ?? 0) };
      } catch (error) {
        throw new Error(describePgError(error, [connectionString]), { cause: error });
      }
    },
    close: () => pool.end().catch(() => undefined),
  };
}
