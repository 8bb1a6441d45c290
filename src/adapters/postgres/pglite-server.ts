import { engine } from '../local-engines.js';

/**
 * The fallback local PostgreSQL where the real server (server.ts) cannot run: PGlite
 * (PostgreSQL 18 compiled to WebAssembly, in this process) served over the PostgreSQL wire protocol on loopback, so the real `pg` driver — the one
 * production uses against a real server — talks to it unchanged.
 *
 * What differs from a real server, and what callers must respect:
 * - one backend multiplexed across connections: a connection inside a transaction holds
 *   every other connection's queries until it ends (never wait on a second connection
 *   while holding a transaction open on the first);
 * - one session: session-level `SET` leaks across connections (use `SET LOCAL`), and the
 *   startup user is ignored (everything runs as `postgres`; a narrower principal is
 *   exercised with `SET LOCAL ROLE`).
 */
export interface PgliteServer {
  /** `postgres://postgres@127.0.0.1:<port>/postgres`: no password (the server has none). */
  connectionString: string;
  host: string;
  port: number;
  stop(): Promise<void>;
}

export interface PgliteServerOptions {
  /** Persistent data directory; omitted means in memory. */
  dataDir?: string;
  /** Concurrent wire connections (default 16): the pool of every adapter plus tooling. */
  maxConnections?: number;
}

export async function startPgliteServer(options: PgliteServerOptions = {}): Promise<PgliteServer> {
  // Engines of the local runtime (src/adapters/local-engines.ts): loaded only here.
  const [{ PGlite }, { PGLiteSocketServer }] = await Promise.all([
    engine('@electric-sql/pglite', () => import('@electric-sql/pglite')),
    engine('@electric-sql/pglite-socket', () => import('@electric-sql/pglite-socket')),
  ]);
  const db = await PGlite.create(options.dataDir ?? 'memory://');
  // Port 0: the OS picks a free loopback port at bind time, so there is no window in
  // which another process could take a port chosen in advance.
  const server = new PGLiteSocketServer({
    db,
    host: '127.0.0.1',
    port: 0,
    maxConnections: options.maxConnections ?? 16,
  });
  try {
    await server.start();
  } catch (error) {
    await db.close();
    throw error;
  }
  const address = server.getServerConn();
  const match = /^127\.0\.0\.1:(\d+)$/.exec(address);
  if (!match) {
    await server.stop();
    await db.close();
    throw new Error(`PGlite socket server reported an unexpected address: ${address}`);
  }
  const port = Number(match[1]);
  let stopping: Promise<void> | undefined;
  return {
    connectionString: `postgres://postgres@127.0.0.1:${port}/postgres`,
    host: '127.0.0.1',
    port,
    stop: () =>
      (stopping ??= (async () => {
        await server.stop();
        await db.close();
      })()),
  };
}
