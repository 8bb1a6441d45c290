import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ClickHouseLogLevel,
  createClient,
  type ClickHouseClient,
  type ClickHouseClientConfigOptions,
  type ClickHouseSettings,
} from '@clickhouse/client';
import type { Session as ChdbSessionClass } from 'chdb';
import { ConfigError } from '../../domain/errors.js';
import { engine } from '../local-engines.js';

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

/** One read-only statement with its bound parameters (values never enter the SQL text). */
export interface ReadStatement {
  query: string;
  query_params: Record<string, string>;
}

/**
 * Runs one SELECT and yields its JSONEachRow output as the engine produces it, in batches
 * of text lines (one line per row). Memory is one batch, never the result: over HTTP the
 * client's `ResultSet.stream()`; embedded, chdb's own `queryStream` (one block at a time).
 * Breaking out of the iteration stops the query.
 */
export type LineStream = (statement: ReadStatement, signal?: AbortSignal) => AsyncIterable<string[]>;

export interface ClickHouseHandle {
  client: ClickHouseClient;
  /** The streaming read path (see `LineStream`); `client.query` serves the small reads. */
  streamLines: LineStream;
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

/**
 * The client's own log off: every failure reaches the caller as an error, which the adapters
 * classify and surface with a stable name; the client also logged each one (an expected
 * refusal such as Code 57 included) with its query id and settings on stderr.
 */
const QUIET = { level: ClickHouseLogLevel.OFF };

function openHttp(target: Extract<ClickHouseTarget, { kind: 'http' }>): ClickHouseHandle {
  // Credentials go to the client and nowhere else: not into errors, logs or outputs.
  const client = createClient({
    url: target.url,
    ...(target.username !== undefined ? { username: target.username } : {}),
    ...(target.password !== undefined ? { password: target.password } : {}),
    ...(target.database !== undefined ? { database: target.database } : {}),
    clickhouse_settings: SETTINGS,
    log: QUIET,
  });
  return { client, streamLines: clientLineStream(client), close: once(() => client.close()) };
}

/**
 * `LineStream` over the official client: `ResultSet.stream()` parses nothing and holds
 * only the rows of the socket chunk at hand. Right for a server; over embedded chdb the
 * client's connection materialises the whole result first (use the handle's own stream).
 */
export function clientLineStream(client: ClickHouseClient): LineStream {
  return async function* lines(statement, signal) {
    const resultSet = await client.query({
      query: statement.query,
      format: 'JSONEachRow',
      ...(Object.keys(statement.query_params).length > 0 ? { query_params: statement.query_params } : {}),
      ...(signal ? { abort_signal: signal } : {}),
    });
    // Iterated by hand so that an early exit closes the result set (which ends the query
    // quietly) before the row stream is torn down.
    const iterator = (resultSet.stream() as AsyncIterable<Array<{ text: string }>>)[Symbol.asyncIterator]();
    let drained = false;
    try {
      for (;;) {
        const step = await iterator.next();
        if (step.done) break;
        yield step.value.map((row) => row.text);
      }
      drained = true;
    } finally {
      if (!drained) {
        resultSet.close();
        await iterator.return?.();
      }
    }
  };
}

/**
 * The chdb engine is a process-wide singleton bound to one data directory: a second
 * embedded open with a different directory while one is live throws ChdbConnectionError
 * (opening the same dataDir twice shares one engine). Sequential open/close/open works.
 */
async function openEmbedded(dataDir: string | undefined, create: boolean): Promise<ClickHouseHandle> {
  if (dataDir !== undefined && !create && !isDirectory(dataDir)) {
    throw new ConfigError(
      'delivery.source_data_dir_missing',
      'the embedded ClickHouse data directory (chdb:<dir>) does not exist or is not a directory; nothing was created',
    );
  }
  // Imported here, not at the top: importing chdb loads its native engine at once (a
  // 566 MB libchdb.so, ~200 MB resident, ~0.3 s), and the registry carries it for linux-x64 only. The
  // HTTP path, which is what Lambda runs, must never pay for or depend on it.
  const [{ drainPending, Session }, { createChdbConnection }] = await Promise.all([
    engine('chdb', () => import('chdb')),
    engine('chdb', () => import('chdb/connection')),
  ]);
  // Our own temp dir rather than chdb's ':memory:', which is one directory shared by every
  // ':memory:' connection in the process and outlives this handle while others hold it.
  const dir = dataDir ?? mkdtempSync(join(tmpdir(), TEMP_PREFIX));
  const temporary = dataDir === undefined;
  let client: ClickHouseClient;
  try {
    if (!temporary) mkdirSync(dir, { recursive: true });
    const connection = createChdbConnection({ path: dir }) as unknown as ClientConnection;
    client = createClient({ connection, clickhouse_settings: SETTINGS, log: QUIET });
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
  const streams: OpenStreams = { closed: false, sessions: new Set(), cancelled: new WeakSet() };
  return {
    client,
    streamLines: chdbLineStream(
      () => new Session(dir, { connectionArgs: [`--session_timezone=${SETTINGS.session_timezone}`] }),
      streams,
    ),
    close: once(async () => {
      // A stream still open (its consumer never finished) is cancelled with its session;
      // its next read fails rather than ending as if the result were complete.
      streams.closed = true;
      for (const session of streams.sessions) {
        streams.cancelled.add(session);
        session.close();
      }
      await client.close();
      // close() defers the native teardown while a query is still running on the engine
      // (an aborted or timed-out query keeps computing); deleting the directory under it,
      // or opening the next engine, must wait for that.
      await drainPending();
      if (temporary) rmSync(dir, { recursive: true, force: true });
    }),
  };
}

type ChdbSession = InstanceType<typeof ChdbSessionClass>;

/**
 * `LineStream` over chdb's own streaming cursor. `@clickhouse/client` over
 * `chdb/connection` runs `Session.queryAsync`, which materialises the whole result in
 * native memory and hands it over as one buffer (~107 B a row: 10 GB at 100 M rows, see
 * docs/rules.md#scale); `queryStreamBind` fetches one block at a time as the consumer pulls.
 * Each stream gets its own connection on the engine's data directory (one cursor per
 * connection; same-directory connections coexist, ~0.4 ms to open), pinned to UTC like
 * the client's session, and closed when the stream ends or is abandoned.
 */
function chdbLineStream(open: () => ChdbSession, streams: OpenStreams): LineStream {
  return async function* lines(statement, signal) {
    if (streams.closed) throw new Error('the embedded ClickHouse handle is closed');
    const session = open();
    streams.sessions.add(session);
    try {
      const cursor = session.queryStreamBind(statement.query, statement.query_params, {
        format: 'JSONEachRow',
        ...(signal ? { signal } : {}),
      });
      for await (const block of cursor) {
        const text = block.text();
        const rows = text.split('\n');
        if (rows[rows.length - 1] === '') rows.pop();
        if (rows.length > 0) yield rows;
      }
      // A cursor cancelled by the handle's close() just stops: that is not the result's end.
      if (streams.cancelled.has(session)) throw new Error('the embedded ClickHouse handle closed during the read');
    } finally {
      streams.sessions.delete(session);
      // Cancels a cursor still open (early exit) before its connection goes.
      session.close();
    }
  };
}

interface OpenStreams {
  closed: boolean;
  sessions: Set<ChdbSession>;
  cancelled: WeakSet<ChdbSession>;
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
