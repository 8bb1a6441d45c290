import pg from 'pg';
import { CutpointError, EffectFailedError, OutcomeUnknownError, ValidationError } from '../../domain/errors.js';
import { TargetUnavailableError, TargetUnobservableError } from '../../domain/delivery/target-errors.js';
import { assertIdentifier } from '../../domain/delivery/target-rules.js';
import type { FaultInjector } from '../../ports/faults.js';
import type { Client, TxResult } from './locks.js';
import { classifyPgCommitFailure, describePgError, isPostgresPermissionFailure, sqlStateOf } from './outcome.js';
import { quoteIdent } from './sql.js';

export interface TxOptions {
  /** The cut point whose effect is this transaction's COMMIT; read-only when absent. */
  cutPoint?: string;
  readOnly?: boolean;
}

export interface TransactionsOptions {
  /** `postgres://…`; never printed. Either this or `pool`. */
  connectionString?: string;
  pool?: pg.PoolConfig;
  faults: FaultInjector;
  role?: string;
  lockTimeoutMs?: number;
}

/**
 * The target's connection pool and its one transaction skeleton: every read and every
 * mutation of the PostgreSQL target runs through `run`, which sets the session (UTC, lock
 * timeout, role), classifies failures (before COMMIT: definite; at COMMIT: the cut point's
 * effect, possibly OutcomeUnknown) and never prints a credential.
 */
export class PgTransactions {
  private readonly pool: pg.Pool;
  private readonly faults: FaultInjector;
  private readonly role: string | undefined;
  private readonly lockTimeoutMs: number;
  private readonly secrets: string[];
  private closing: Promise<void> | undefined;

  constructor(options: TransactionsOptions) {
    this.faults = options.faults;
    this.role = options.role === undefined ? undefined : assertIdentifier(options.role, 'role');
    this.lockTimeoutMs = options.lockTimeoutMs ?? 30_000;
    if (!Number.isSafeInteger(this.lockTimeoutMs) || this.lockTimeoutMs < 1) {
      throw new ValidationError('delivery.invalid_option', 'lockTimeoutMs must be a positive integer');
    }
    this.secrets = [options.connectionString, options.pool?.password, options.pool?.connectionString].filter(
      (s): s is string => typeof s === 'string',
    );
    // 8: a window's parts (max_concurrency) each keep two chunk loads in flight
    // (src/delivery/parts/extract-load-part.ts) besides their reads.
    this.pool = new pg.Pool({
      max: 8,
      ...options.pool,
      ...(options.connectionString !== undefined ? { connectionString: options.connectionString } : {}),
    });
    // An idle client whose server went away emits 'error' on the pool; without a listener
    // Node would crash the process. The next checkout reconnects or fails definitely.
    this.pool.on('error', () => undefined);
  }

  close(): Promise<void> {
    return (this.closing ??= this.pool.end());
  }

  /**
   * Runs `body` in one transaction on one connection. A read-only or no-op body is rolled
   * back. A mutation's COMMIT runs as the cut point's effect: a lost answer there is
   * OutcomeUnknown; any failure before COMMIT rolls back and is definite.
   */
  async run<T>(options: TxOptions, body: (client: Client) => Promise<TxResult<T>>): Promise<T> {
    let client: Client;
    try {
      client = await this.pool.connect();
    } catch (error) {
      throw new TargetUnavailableError(`cannot connect to PostgreSQL: ${describePgError(error, this.secrets)}`, {
        cause: { code: sqlStateOf(error) },
      });
    }
    let healthy = true;
    try {
      const settings = [
        `BEGIN ISOLATION LEVEL READ COMMITTED${options.readOnly ? ' READ ONLY' : ''}`,
        `SET LOCAL TimeZone = 'UTC'`,
        `SET LOCAL lock_timeout = ${this.lockTimeoutMs}`,
        ...(this.role !== undefined ? [`SET LOCAL ROLE ${quoteIdent(this.role)}`] : []),
      ];
      let result: TxResult<T>;
      try {
        await client.query(settings.join('; '));
        result = await body(client);
      } catch (error) {
        healthy = await rollback(client);
        throw this.beforeCommitFailure(error, options);
      }
      if (!result.commit || options.cutPoint === undefined) {
        healthy = await rollback(client);
        return result.value;
      }
      const cutPoint = options.cutPoint;
      try {
        await this.faults.at(cutPoint, () => this.commit(client, cutPoint));
      } catch (error) {
        // crash-before leaves the transaction open: roll it back as a dying worker's
        // connection would. After an applied COMMIT this is a harmless no-op.
        healthy = false;
        await rollback(client);
        throw error;
      }
      return result.value;
    } finally {
      client.release(!healthy);
    }
  }

  private async commit(client: Client, cutPoint: string): Promise<void> {
    let result: pg.QueryResult;
    try {
      result = await client.query('COMMIT');
    } catch (error) {
      const message = `COMMIT at ${cutPoint}: ${describePgError(error, this.secrets)}`;
      if (classifyPgCommitFailure(error) === 'unknown') throw new OutcomeUnknownError(cutPoint, message);
      throw new EffectFailedError(cutPoint, message, { cause: { code: sqlStateOf(error) } });
    }
    // An aborted transaction answers COMMIT with ROLLBACK: definitely not applied.
    if (result.command !== 'COMMIT') throw new EffectFailedError(cutPoint, `transaction rolled back at ${cutPoint}`);
  }

  private beforeCommitFailure(error: unknown, options: TxOptions): Error {
    if (error instanceof CutpointError) return error;
    const message = describePgError(error, this.secrets);
    if (isPostgresPermissionFailure(error)) return new TargetUnobservableError(`permission denied: ${message}`);
    if (options.cutPoint !== undefined) {
      // Nothing can have committed: COMMIT was never sent. Only the SQLSTATE is kept as cause.
      return new EffectFailedError(options.cutPoint, `${options.cutPoint}: ${message}`, {
        cause: { code: sqlStateOf(error) },
      });
    }
    return new TargetUnavailableError(message, { cause: { code: sqlStateOf(error) } });
  }
}

/** Ends the transaction; false when the connection is no longer usable. */
async function rollback(client: Client): Promise<boolean> {
  try {
    await client.query('ROLLBACK');
    return true;
  } catch {
    return false;
  }
}
