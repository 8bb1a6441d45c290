import type { ChdbQueryStream, Session as ChdbSessionClass } from 'chdb';
import { engine } from '../local-engines.js';

/**
 * The chdb side of the local ClickHouse HTTP host (src/local/clickhouse-host-server.ts):
 * one embedded engine bound to one data directory, driven one statement at a time with the
 * pieces a ClickHouse HTTP request carries (SQL, settings, `param_*`, database, default
 * format). The HTTP framing lives in src/local; only this file touches chdb.
 *
 * Every statement gets its own chdb connection on the engine's directory (same-directory
 * connections coexist and share the engine; ~2 ms to open). That connection carries the
 * request's settings and query parameters as session state (`SET`), exactly as a
 * ClickHouse HTTP request scopes them to itself, and is closed when the statement ends —
 * so nothing leaks from one request to the next and overlapping requests never share
 * state. Values never reach the statement's text: parameters are bound by the engine
 * from `param_<name>` session values (the same text form the HTTP interface takes).
 *
 * What is serialized: nothing here. chdb allows one streaming cursor per connection
 * (one connection per statement satisfies that) and serializes its own `queryBind*`
 * path process-wide; this file never uses it (parameters are session values instead).
 * ClickHouse's own table locks order a DDL against a running SELECT, as on a server.
 */

type ChdbSession = InstanceType<typeof ChdbSessionClass>;

export interface HostStatement {
  /** The full statement text (for an insert: the INSERT line, a newline, then the data). */
  sql: string;
  /** Query settings in request order (`name`, text value): URL parameters that are settings. */
  settings: ReadonlyArray<readonly [string, string]>;
  /** Query parameters (`name` without `param_`, text value exactly as sent). */
  params: ReadonlyArray<readonly [string, string]>;
  /** Current database for the statement (the HTTP `database` parameter). */
  database?: string;
  /** Output format when the statement has no FORMAT clause (HTTP `default_format`). */
  defaultFormat: string;
}

/** The `X-ClickHouse-Summary` fields the host can vouch for (all decimal strings). */
export interface HostSummary {
  read_rows: string;
  read_bytes: string;
  written_rows: string;
  written_bytes: string;
  total_rows_to_read: string;
  result_rows: string;
  result_bytes: string;
  elapsed_ns: string;
}

export interface HostExecution {
  /** Output bytes in engine blocks; the first `next()` raises any error found before output. */
  chunks: AsyncIterator<Uint8Array>;
  /** True when the output comes block by block (SELECT-like); false for single-shot statements. */
  streamed: boolean;
  /** Stops a streamed statement at the next block boundary and releases its connection. */
  cancel(): void;
  /** What the engine reported so far (final once `chunks` is done). */
  summary(): HostSummary;
}

export interface HostEngine {
  /** The engine's version, as `version()` prints it (for error texts). */
  version: string;
  execute(statement: HostStatement): Promise<HostExecution>;
  /** Refuses new statements, cancels open streams, and waits for native work to drain. */
  close(): Promise<void>;
}

/** A ClickHouse-shaped failure: `code` is the ClickHouse error code, `message` the engine's text. */
export class HostEngineError extends Error {
  readonly clickhouseCode: number;
  constructor(clickhouseCode: number, message: string) {
    super(message);
    this.name = 'HostEngineError';
    this.clickhouseCode = clickhouseCode;
  }
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
const STREAM_UNSUPPORTED = /Streaming query is not supported/;
// Generic codes a server would use: BAD_ARGUMENTS, STD_EXCEPTION.
const BAD_ARGUMENTS = 36;
const STD_EXCEPTION = 1001;

export async function openHostEngine(dataDir: string): Promise<HostEngine> {
  // Imported here, not at the top, as client.ts does: loading chdb loads the native engine.
  const { Session, drainPending } = await engine('chdb', () => import('chdb'));
  // The first connection binds the directory for this process (or fails: one process per
  // directory); it stays open for the host's lifetime so the engine is never torn down
  // between requests.
  const anchor = new Session(dataDir);
  const version = (await anchor.queryAsync('SELECT version()', { format: 'TabSeparated' })).text().trim();
  const open = new Set<ChdbSession>();
  let closed = false;

  async function execute(statement: HostStatement): Promise<HostExecution> {
    if (closed)
      throw new HostEngineError(STD_EXCEPTION, 'Code: 1001. DB::Exception: the host is shutting down. (STD_EXCEPTION)');
    const session = new Session(dataDir);
    open.add(session);
    const release = (): void => {
      open.delete(session);
      session.close();
    };
    try {
      await prepare(session, statement);
      return await run(session, statement, release);
    } catch (error) {
      release();
      throw asEngineError(error);
    }
  }

  return {
    version,
    execute,
    close: async () => {
      closed = true;
      for (const session of open) session.close();
      open.clear();
      anchor.close();
      // close() defers the native teardown behind queries still computing (a cancelled
      // stream's fetch, a single-shot whose client went away); the directory is only free
      // once they are done.
      await drainPending();
    },
  };
}

/** Session state for one statement: parameters, settings (readonly last), database. */
async function prepare(session: ChdbSession, statement: HostStatement): Promise<void> {
  const assignments: string[] = [];
  for (const [name, value] of statement.params) assignments.push(`param_${identifier(name)} = ${literal(value)}`);
  // `readonly` goes last: once it is set, the SET that carries it could not change more.
  const ordered = [
    ...statement.settings.filter(([n]) => n !== 'readonly'),
    ...statement.settings.filter(([n]) => n === 'readonly'),
  ];
  for (const [name, value] of ordered) assignments.push(`${identifier(name)} = ${literal(value)}`);
  if (assignments.length > 0) await session.queryAsync(`SET ${assignments.join(', ')}`, { format: 'TabSeparated' });
  if (statement.database !== undefined)
    await session.queryAsync(`USE ${quoteIdentifier(statement.database)}`, { format: 'TabSeparated' });
}

async function run(session: ChdbSession, statement: HostStatement, release: () => void): Promise<HostExecution> {
  let stream: ChdbQueryStream;
  try {
    stream = session.queryStream(statement.sql, { format: statement.defaultFormat });
  } catch (error) {
    // chdb streams only SELECT-like statements and refuses the rest up front (nothing ran):
    // DDL, INSERT, EXCHANGE and friends run single-shot; their output is empty or small.
    if (error instanceof Error && STREAM_UNSUPPORTED.test(error.message))
      return singleShot(session, statement, release);
    throw error;
  }
  let rows = 0;
  let bytes = 0;
  const started = process.hrtime.bigint();
  const iterator = stream[Symbol.asyncIterator]();
  let done = false;
  const finish = (): void => {
    if (done) return;
    done = true;
    stream.cancel();
    release();
  };
  return {
    streamed: true,
    chunks: {
      next: async () => {
        if (done) return { done: true, value: undefined };
        try {
          const step = await iterator.next();
          if (step.done) {
            finish();
            return { done: true, value: undefined };
          }
          rows += step.value.numRows;
          bytes += step.value.numBytes;
          return { done: false, value: step.value.raw() };
        } catch (error) {
          finish();
          throw asEngineError(error);
        }
      },
    },
    cancel: finish,
    summary: () => summaryOf({ resultRows: rows, resultBytes: bytes, elapsedNs: process.hrtime.bigint() - started }),
  };
}

async function singleShot(session: ChdbSession, statement: HostStatement, release: () => void): Promise<HostExecution> {
  try {
    const result = await session.queryAsync(statement.sql, { format: statement.defaultFormat });
    const output = result.bytes();
    const summary = summaryOf({
      readRows: result.rowsRead,
      readBytes: result.bytesRead,
      resultRows: 0,
      resultBytes: output.length,
      elapsedNs: BigInt(Math.round(result.elapsed * 1e9)),
    });
    let sent = false;
    return {
      streamed: false,
      chunks: {
        next: async () => {
          if (sent || output.length === 0) return { done: true, value: undefined };
          sent = true;
          return { done: false, value: output };
        },
      },
      cancel: () => undefined,
      summary: () => summary,
    };
  } finally {
    release();
  }
}

function summaryOf(counts: {
  readRows?: number;
  readBytes?: number;
  resultRows: number;
  resultBytes: number;
  elapsedNs: bigint;
}): HostSummary {
  return {
    read_rows: String(counts.readRows ?? 0),
    read_bytes: String(counts.readBytes ?? 0),
    // chdb reports no written counts (an INSERT comes back with zeros); never invent them.
    written_rows: '0',
    written_bytes: '0',
    total_rows_to_read: '0',
    result_rows: String(counts.resultRows),
    result_bytes: String(counts.resultBytes),
    elapsed_ns: String(counts.elapsedNs),
  };
}

function identifier(name: string): string {
  if (!IDENTIFIER.test(name)) {
    throw new HostEngineError(
      BAD_ARGUMENTS,
      `Code: 36. DB::Exception: Invalid setting or parameter name ${JSON.stringify(name)}. (BAD_ARGUMENTS)`,
    );
  }
  return name;
}

function quoteIdentifier(name: string): string {
  if (name.includes('\0'))
    throw new HostEngineError(BAD_ARGUMENTS, 'Code: 36. DB::Exception: Invalid database name. (BAD_ARGUMENTS)');
  return `\`${name.replace(/\\/g, '\\\\').replace(/`/g, '\\`')}\``;
}

/** A SQL string literal whose content is exactly `value` (the engine unquotes it back). */
function literal(value: string): string {
  if (value.includes('\0'))
    throw new HostEngineError(
      BAD_ARGUMENTS,
      'Code: 36. DB::Exception: A setting or parameter value contains a NUL byte. (BAD_ARGUMENTS)',
    );
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** Any failure as a HostEngineError carrying the ClickHouse code of its `Code: N.` text. */
export function asEngineError(error: unknown): HostEngineError {
  if (error instanceof HostEngineError) return error;
  const message = error instanceof Error ? error.message : String(error);
  const match = /Code: (\d+)\./.exec(message);
  if (match?.[1] !== undefined) return new HostEngineError(Number(match[1]), message);
  return new HostEngineError(STD_EXCEPTION, `Code: ${STD_EXCEPTION}. DB::Exception: ${message}. (STD_EXCEPTION)`);
}
