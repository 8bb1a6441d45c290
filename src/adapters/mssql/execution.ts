import sql from 'mssql';
import { CutpointError, EffectFailedError, OutcomeUnknownError } from '../../domain/errors.js';
import { TargetUnavailableError, TargetUnobservableError } from '../../domain/delivery/target-errors.js';
import type { FaultInjector } from '../../ports/faults.js';
import {
  classifyMssqlFailure,
  describeMssqlError,
  isMssqlPermissionFailure,
  parseMssqlConnection,
  serverErrorNumber,
} from './connection.js';
import { thrownError } from './results.js';
import type { Statement } from './sql-text.js';

export type Executor = sql.ConnectionPool | sql.Transaction;

/**
 * The SQL Server target's pool and how every statement runs on it: a read (any failure
 * definite), a mutation (a batch holding its own BEGIN … COMMIT, run as its cut point's
 * effect: a lost connection or a timeout there is OutcomeUnknown), and the failure
 * classification both share; no credential in any message.
 */
export class MssqlExecution {
  private readonly pool: sql.ConnectionPool;
  readonly faults: FaultInjector;
  readonly secrets: string[];
  private connecting: Promise<sql.ConnectionPool> | undefined;
  private closing: Promise<void> | undefined;

  constructor(options: { connection: string; faults: FaultInjector; requestTimeoutMs?: number }) {
    const { config, secrets } = parseMssqlConnection(options.connection);
    this.secrets = secrets;
    this.faults = options.faults;
    this.pool = new sql.ConnectionPool({
      ...config,
      requestTimeout: options.requestTimeoutMs ?? 120_000,
      options: { ...config.options, useUTC: true },
      pool: { max: 4, ...config.pool },
    });
    // Idle-connection errors surface on the pool; the next request reconnects or fails.
    this.pool.on('error', () => undefined);
  }

  close(): Promise<void> {
    return (this.closing ??= this.pool.close().then(
      () => undefined,
      () => undefined,
    ));
  }

  async connected(): Promise<sql.ConnectionPool> {
    this.connecting ??= this.pool.connect().catch((error: unknown) => {
      this.connecting = undefined;
      const code = (error as { code?: unknown } | undefined)?.code;
      throw new TargetUnavailableError(`cannot connect to SQL Server: ${describeMssqlError(error, this.secrets)}`, {
        cause: { number: serverErrorNumber(error), code: typeof code === 'string' ? code : undefined },
      });
    });
    return this.connecting;
  }

  async run(executor: Executor, statement: Statement): Promise<sql.IResult<unknown>> {
    const request = new sql.Request(executor as sql.ConnectionPool);
    for (const p of statement.params) request.input(p.name, paramType(p.type, p.value), p.value);
    return request.query(statement.text);
  }

  /** A read: any failure is definite; permission failures say the principal cannot observe. */
  async read(statement: Statement): Promise<sql.IResult<unknown>> {
    const pool = await this.connected();
    try {
      return await this.run(pool, statement);
    } catch (error) {
      throw this.readFailure(error);
    }
  }

  /**
   * A batch that holds its own BEGIN … COMMIT runs as the cut point's effect. A server
   * error rolled it back (XACT_ABORT ON): definite, mapped to its stable error. A lost
   * connection or a timeout may have followed the COMMIT: OutcomeUnknown.
   */
  async mutate(cutPoint: string, statement: Statement): Promise<sql.IResult<unknown>> {
    const pool = await this.connected();
    return this.faults.at(cutPoint, async () => {
      try {
        return await this.run(pool, statement);
      } catch (error) {
        throw this.atCommit(cutPoint, error);
      }
    });
  }

  atCommit(cutPoint: string, error: unknown): Error {
    if (error instanceof CutpointError) return error;
    if (classifyMssqlFailure(error) === 'unknown') {
      return new OutcomeUnknownError(cutPoint, `${cutPoint}: ${describeMssqlError(error, this.secrets)}`);
    }
    return this.definite(cutPoint, error);
  }

  definite(cutPoint: string, error: unknown): Error {
    if (error instanceof CutpointError) return error;
    const mapped = thrownError(error);
    if (mapped) return mapped;
    const message = describeMssqlError(error, this.secrets);
    if (isMssqlPermissionFailure(error)) return new TargetUnobservableError(`permission denied: ${message}`);
    return new EffectFailedError(cutPoint, `${cutPoint}: ${message}`, { cause: { number: serverErrorNumber(error) } });
  }

  readFailure(error: unknown): Error {
    if (error instanceof CutpointError) return error;
    const mapped = thrownError(error);
    if (mapped) return mapped;
    const message = describeMssqlError(error, this.secrets);
    if (isMssqlPermissionFailure(error)) return new TargetUnobservableError(`permission denied: ${message}`);
    return new TargetUnavailableError(message);
  }
}

function paramType(type: Statement['params'][number]['type'], value: unknown): sql.ISqlType {
  switch (type) {
    case 'nvarchar':
      return sql.NVarChar(typeof value === 'string' && value.length > 4000 ? sql.MAX : 4000);
    case 'int':
      return sql.Int();
    case 'bigint':
      return sql.BigInt();
    case 'datetime2':
      return sql.DateTime2(3);
  }
}
