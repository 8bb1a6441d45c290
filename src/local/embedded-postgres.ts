import { startEmbeddedPostgresServer, type EmbeddedPostgresServer } from '../adapters/postgres/embedded-server.js';
import { LocalRuntimeError } from './errors.js';

/**
 * Embedded PostgreSQL for local runs and tests: PGlite served over the wire on a free
 * loopback port (the PGlite-specific code lives in the postgres adapter, the only place
 * allowed to import it). Stop it with `stop()`; a temporary in-memory database vanishes.
 */
export type EmbeddedPostgres = EmbeddedPostgresServer;

export interface EmbeddedPostgresOptions {
  /** Persist the database here; omitted means in memory. */
  dataDir?: string;
  maxConnections?: number;
}

export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions = {}): Promise<EmbeddedPostgres> {
  try {
    return await startEmbeddedPostgresServer(options);
  } catch (error) {
    throw new LocalRuntimeError(`embedded PostgreSQL did not start: ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
    });
  }
}
