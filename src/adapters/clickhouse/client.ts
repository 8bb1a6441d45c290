import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createClient,
  type ClickHouseClient,
  type ClickHouseClientConfigOptions,
  type ClickHouseSettings,
} from '@clickhouse/client';
import { ConfigError } from '../../domain/errors.js';

/**
 * Where ClickHouse lives. `embedded` runs ClickHouse in this process (chdb) for local runs
 * and tests; `http` is a real server, as in production. Both return the same official
 * `@clickhouse/client`, so the code above this adapter cannot tell them apart.
 */
export type ClickHouseTarget =
  | {
      kind: 'embedded';
      /**
       * Persistent data directory, kept on close. Without it the engine gets a fresh
       * temporary directory that close() removes.
       */
      dataDir?: string;
      /**
       * Create a missing `dataDir` (default true). False (a route's `chdb:<dir>` binding):
       * a missing directory is refused with `delivery.source_data_dir_missing` and nothing
       * is created — a directory ClickHouse never wrote cannot hold the source.
       */
      create?: boolean;
    }
  | { kind: 'http'; url: string; username?: string; password?: string; database?: string };

export interface ClickHouseHandle {
  client: ClickHouseClient;
  /** Closes the client; for a temporary embedded engine also deletes its data. Idempotent. */
  close(): Promise<void>;
}

/**
 * Every session runs in UTC, whatever the host's TZ or the server's default. A parameter
 * typed `{start:DateTime64(3)}` and a string like '2024-01-01 00:00:00.000' are read in the
 * session time zone; embedded ClickHouse takes that zone from the process TZ, so without
 * this a laptop outside UTC would silently shift every delivery window.
 */
const SETTINGS: ClickHouseSettings = { session_timezone: 'UTC' };

const TEMP_PREFIX = 'cutpoint-clickhouse-';

/**
 * The connection contract as @clickhouse/client declares it. ChdbConnection implements the
 * same contract, but typed against its own copy of @clickhouse/client-common, and the
 * contract mentions a class with a private field (SettingsMap), so TypeScript treats the
 * two copies as unrelated types. The runtime shapes are the same; the tests in
 * test/integration/clickhouse.test.ts are what hold that claim, hence the one cast below.
 */
type ClientConnection = NonNullable<ClickHouseClientConfigOptions['connection']>;

export async function openClickHouse(target: ClickHouseTarget): Promise<ClickHouseHandle> {
  return target.kind === 'embedded' ? await openEmbedded(target.dataDir, target.create ?? true) : openHttp(target);
}

function openHttp(target: Extract<ClickHouseTarget, { kind: 'http' }>): ClickHouseHandle {
  // Credentials go to the client and nowhere else: not into errors, logs or outputs.
  const client = createClient({
    url: target.url,
    ...(target.username !== undefined ? { username: target.username } : {}),
    ...(target.password !== undefined ? { password: target.password } : {}),
    ...(target.database !== undefined ? { database: target.database } : {}),
    clickhouse_settings: SETTINGS,
  });
  return { client, close: once(() => client.close()) };
}

/**
 * The chdb engine is a process-wide singleton bound to one data directory: a second
 * embedded open with a different directory while one is live throws ChdbConnectionError
 * (opening the same dataDir twice shares one engine). Sequential open/close/open works.
 */
async function openEmbedded(dataDir: string | undefined, create: boolean): Promise<ClickHouseHandle> {
  if (dataDir !== undefined && !create && !isDirectory(dataDir)) {
    throw new ConfigError('delivery.source_data_dir_missing', 'the embedded ClickHouse data directory (chdb:<dir>) does not exist or is not a directory; nothing was created');
  }
  // Imported here, not at the top: importing chdb loads its native engine at once (a
  // 566 MB libchdb.so, ~200 MB resident, ~0.3 s), and the registry carries it for linux-x64 only. The
  // HTTP path, which is what Lambda runs, must never pay for or depend on it.
  const [{ drainPending }, { createChdbConnection }] = await Promise.all([import('chdb'), import('chdb/connection')]);
  // Our own temp dir rather than chdb's ':memory:', which is one directory shared by every
  // ':memory:' connection in the process and outlives this handle while others hold it.
  const dir = dataDir ?? mkdtempSync(join(tmpdir(), TEMP_PREFIX));
  const temporary = dataDir === undefined;
  let client: ClickHouseClient;
  try {
    if (!temporary) mkdirSync(dir, { recursive: true });
    const connection = createChdbConnection({ path: dir }) as unknown as ClientConnection;
    client = createClient({ connection, clickhouse_settings: SETTINGS });
  } catch (error) {
    if (temporary) rmSync(dir, { recursive: true, force: true });
    // One process at a time may hold a data directory (ClickHouse locks its status file);
    // chdb reports the lock only as a failed connection.
    if (!temporary && (error as { name?: unknown } | null)?.name === 'ChdbConnectionError') {
      throw new ConfigError(
        'delivery.source_busy',
        'the embedded ClickHouse data directory (chdb:<dir>) is in use by another process; one process at a time may hold it: wait for that run to end, then repeat',
      );
    }
    throw error;
  }
  return {
    client,
    close: once(async () => {
      await client.close();
      // close() defers the native teardown while a query is still running on the engine
      // (an aborted or timed-out query keeps computing); deleting the directory under it,
      // or opening the next engine, must wait for that.
      await drainPending();
      if (temporary) rmSync(dir, { recursive: true, force: true });
    }),
  };
}

function once(fn: () => Promise<void>): () => Promise<void> {
  let closing: Promise<void> | undefined;
  return () => (closing ??= fn());
}

/**
 * A Date as a `DateTime64(3)` query parameter, exact to the millisecond in both targets.
 * Never pass a Date itself: over HTTP clickhouse-js sends it as epoch seconds with
 * milliseconds, but chdb binds it as 'YYYY-MM-DD HH:MM:SS' and drops the milliseconds,
 * which moves window bounds.
 */
export function dateTime64Param(date: Date): string {
  if (Number.isNaN(date.getTime())) throw new RangeError('dateTime64Param: invalid Date');
  return date.toISOString().replace('T', ' ').replace('Z', '');
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
