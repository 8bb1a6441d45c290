import pg from 'pg';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { PostgresServerUnavailableError } from '../../src/adapters/postgres/server.js';
import type * as ServerModule from '../../src/adapters/postgres/server.js';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../src/local/embedded-postgres.js';

/**
 * Where the PostgreSQL server cannot run (no binaries for the platform, a start that
 * fails), local PostgreSQL falls back to PGlite over the wire and says so once. The
 * machine here can run the server, so its absence is what this file stands in for: the
 * server start reports itself unavailable, as it does when the platform package is missing.
 */
vi.mock('../../src/adapters/postgres/server.js', async (importOriginal) => {
  const original = await importOriginal<typeof ServerModule>();
  return {
    ...original,
    startPostgresServer: () =>
      Promise.reject(
        new original.PostgresServerUnavailableError(
          'no PostgreSQL server binaries for sunos-sparc (@embedded-postgres/sunos-sparc is not installed)',
        ),
      ),
  };
});

const started: EmbeddedPostgres[] = [];
afterAll(async () => {
  await Promise.all(started.map((s) => s.stop()));
});

describe('local PostgreSQL where the server cannot run', () => {
  it('falls back to PGlite over the wire, says why on stderr once, and refuses when the real server was required', async () => {
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      for (let i = 0; i < 2; i++) started.push(await startEmbeddedPostgres());
      expect(started.map((s) => s.engine)).toEqual(['pglite', 'pglite']);
      const said = stderr.mock.calls.map((call) => String(call[0])).filter((line) => line.includes('PGlite'));
      expect(said).toEqual([
        'cutpoint: no PostgreSQL server binaries for sunos-sparc (@embedded-postgres/sunos-sparc is not installed); using PGlite over the wire instead (one connection, one core)\n',
      ]);
    } finally {
      stderr.mockRestore();
    }
    const client = new pg.Client(started[0]!.connectionString);
    client.on('error', () => undefined);
    await client.connect();
    try {
      expect((await client.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    } finally {
      await client.end();
    }
    await expect(startEmbeddedPostgres({ engine: 'postgres' })).rejects.toMatchObject({
      name: 'LocalRuntimeError',
      code: 'local.runtime_failed',
      cause: expect.any(PostgresServerUnavailableError),
    });
    // Two PGlite starts: 2-4 s each on an idle machine, far more on a loaded one.
  }, 120_000);
});
