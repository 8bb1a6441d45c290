import { ClickHouseError } from '@clickhouse/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openClickHouse, type ClickHouseHandle } from '../../src/adapters/clickhouse/client.js';
import { classifyClickHouseError } from '../../src/domain/clickhouse-errors.js';
import { retryRead } from '../../src/engine/read-retry.js';

/**
 * K1 (docs/testing.md#governance-acceptance): real server errors through the real driver path
 * (chdb inside this process behind `@clickhouse/client`, opened exactly as
 * src/adapters/clickhouse/client.ts opens it).
 *
 * Measured on chdb 26.7.2.1, @clickhouse/client 1.23.1:
 * - A server error arrives as an object with own keys `code`, `type`, `cause`, `name === 'Error'`,
 *   constructor name `ClickHouseError`, and `instanceof ClickHouseError === false` (chdb's own
 *   copy of client-common). `cause` is chdb's `ChdbQueryError` carrying the raw server text.
 * - `throwIf(c, msg, toInt32(999)) SETTINGS allow_custom_error_code_in_throwif = 1` gives
 *   code '999', type 'KEEPER_EXCEPTION', but the server REPLACES the message with
 *   "Value passed to 'throwIf' function is non-zero: while executing 'FUNCTION throwIf(…,
 *   'No node, path: /x'_String …)'" — the custom text appears only quoted inside. So the
 *   plain query does NOT leave `message` = "No node, path: …", as one might expect,
 *   on this chdb: it classifies KEEPER_OTHER. A real Keeper error reads
 *   "Code: 999. Coordination::Exception: No node, path: …", and the client's greedy
 *   `.*Exception: ` strips through that prefix; putting the prefix in the throwIf text
 *   reproduces exactly that, leaving message "No node, path: /x'_String, …".
 * - 159 (TIMEOUT_EXCEEDED) by the same trick: code '159', type 'TIMEOUT_EXCEEDED'.
 * - An aborted query: a plain Error (name 'Error', no code) "Query aborted (the underlying
 *   computation may still run to completion in the background)": only the caller's signal
 *   proves the abort.
 */
let ch: ClickHouseHandle;

beforeAll(async () => {
  ch = await openClickHouse({ kind: 'embedded' });
});

afterAll(async () => {
  await ch.close();
});

async function failureOf(query: string, signal?: AbortSignal): Promise<unknown> {
  try {
    const result = await ch.client.query({ query, format: 'JSONEachRow', ...(signal ? { abort_signal: signal } : {}) });
    await result.json();
  } catch (error) {
    return error;
  }
  throw new Error(`expected ${query} to fail`);
}

const CUSTOM_CODE = 'SETTINGS allow_custom_error_code_in_throwif = 1';

function shapeOf(error: unknown): Record<string, unknown> {
  const e = error as { name?: unknown; code?: unknown; type?: unknown; message?: unknown };
  return {
    name: e.name,
    code: e.code,
    type: e.type,
    message: e.message,
    isClickHouseError: error instanceof ClickHouseError,
  };
}

describe('ClickHouse errors through the driver (K1)', () => {
  it('a Keeper "No node" 999 is KEEPER_NO_NODE although instanceof fails and name is Error', async () => {
    const error = await failureOf(
      `SELECT throwIf(1, 'Coordination::Exception: No node, path: /x', toInt32(999)) ${CUSTOM_CODE}`,
    );
    const shape = shapeOf(error);
    expect(shape).toMatchObject({ name: 'Error', code: '999', type: 'KEEPER_EXCEPTION', isClickHouseError: false });
    expect(shape.message).toMatch(/^No node, path: \/x/);
    expect(classifyClickHouseError(error)).toEqual({
      errorClass: 'KEEPER_NO_NODE',
      code: '999',
      type: 'KEEPER_EXCEPTION',
    });
  });

  it("a plain throwIf 999 arrives structured but with the server's own message: KEEPER_OTHER", async () => {
    const error = await failureOf(`SELECT throwIf(1, 'No node, path: /x', toInt32(999)) ${CUSTOM_CODE}`);
    const shape = shapeOf(error);
    expect(shape).toMatchObject({ name: 'Error', code: '999', type: 'KEEPER_EXCEPTION', isClickHouseError: false });
    expect(shape.message).toMatch(/^Value passed to 'throwIf' function is non-zero/);
    expect(classifyClickHouseError(error)).toEqual({
      errorClass: 'KEEPER_OTHER',
      code: '999',
      type: 'KEEPER_EXCEPTION',
    });
  });

  it('a 999 Session expired is KEEPER_SESSION_EXPIRED', async () => {
    const error = await failureOf(
      `SELECT throwIf(1, 'Coordination::Exception: Session expired', toInt32(999)) ${CUSTOM_CODE}`,
    );
    expect(classifyClickHouseError(error).errorClass).toBe('KEEPER_SESSION_EXPIRED');
  });

  it('a 159 is DDL_TIMEOUT', async () => {
    const error = await failureOf(
      `SELECT throwIf(1, 'Watching task is executing longer than distributed_ddl_task_timeout', toInt32(159)) ${CUSTOM_CODE}`,
    );
    expect(shapeOf(error)).toMatchObject({
      name: 'Error',
      code: '159',
      type: 'TIMEOUT_EXCEEDED',
      isClickHouseError: false,
    });
    expect(classifyClickHouseError(error)).toEqual({
      errorClass: 'DDL_TIMEOUT',
      code: '159',
      type: 'TIMEOUT_EXCEEDED',
    });
  });

  it('an unknown table and an unknown database are their own classes', async () => {
    expect(classifyClickHouseError(await failureOf('SELECT * FROM default.cutpoint_no_such_table'))).toEqual({
      errorClass: 'UNKNOWN_TABLE',
      code: '60',
      type: 'UNKNOWN_TABLE',
    });
    expect(classifyClickHouseError(await failureOf('SELECT * FROM cutpoint_no_such_db.t'))).toEqual({
      errorClass: 'UNKNOWN_DATABASE',
      code: '81',
      type: 'UNKNOWN_DATABASE',
    });
  });

  it('EXCHANGE in a Memory database is NOT_IMPLEMENTED', async () => {
    await ch.client.command({ query: 'CREATE DATABASE cutpoint_k1_memory ENGINE = Memory' });
    await ch.client.command({ query: 'CREATE TABLE cutpoint_k1_memory.a (x UInt8) ENGINE = Memory' });
    await ch.client.command({ query: 'CREATE TABLE cutpoint_k1_memory.b (x UInt8) ENGINE = Memory' });
    const error = await ch.client
      .command({ query: 'EXCHANGE TABLES cutpoint_k1_memory.a AND cutpoint_k1_memory.b' })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(classifyClickHouseError(error)).toEqual({
      errorClass: 'NOT_IMPLEMENTED',
      code: '48',
      type: 'NOT_IMPLEMENTED',
    });
  });

  it('an aborted query is a plain Error: ABORTED only by our signal, UNCLASSIFIED without it', async () => {
    const controller = new AbortController();
    controller.abort();
    const error = await failureOf('SELECT 1', controller.signal);
    expect(shapeOf(error)).toMatchObject({ name: 'Error', code: undefined, type: undefined });
    expect(classifyClickHouseError(error, { aborted: controller.signal.aborted })).toEqual({ errorClass: 'ABORTED' });
    expect(classifyClickHouseError(error)).toEqual({ errorClass: 'UNCLASSIFIED' });
  });
});

describe('opt-in read retry over the real driver (K3)', () => {
  const NO_NODE = `SELECT throwIf(1, 'Coordination::Exception: No node, path: /x', toInt32(999)) ${CUSTOM_CODE}`;
  const SESSION_EXPIRED = `SELECT throwIf(1, 'Coordination::Exception: Session expired', toInt32(999)) ${CUSTOM_CODE}`;

  /** Runs the scripted statements in turn, one per attempt, under the attempt's signal. */
  function attempts(statements: string[]) {
    const ran: string[] = [];
    const attempt = async (signal: AbortSignal): Promise<unknown> => {
      const query = statements[ran.length] ?? 'SELECT 1 AS ok';
      ran.push(query);
      const result = await ch.client.query({ query, format: 'JSONEachRow', abort_signal: signal });
      return result.json();
    };
    return { attempt, ran };
  }

  it('retries a real 999 No node within max_attempts and returns the success', async () => {
    const { attempt, ran } = attempts([NO_NODE, NO_NODE]);
    const rows = await retryRead(
      'read',
      { max_attempts: 3, max_elapsed_ms: 10_000 },
      new AbortController().signal,
      attempt,
      classifyClickHouseError,
    );
    expect(rows).toEqual([{ ok: 1 }]);
    expect(ran).toHaveLength(3);
  });

  it('stops at max_attempts with the real error, and never retries another Keeper class', async () => {
    const exhausted = attempts([NO_NODE, NO_NODE, NO_NODE]);
    const error = await retryRead(
      'read',
      { max_attempts: 2, max_elapsed_ms: 10_000 },
      new AbortController().signal,
      exhausted.attempt,
      classifyClickHouseError,
    ).catch((e: unknown) => e);
    expect(classifyClickHouseError(error).errorClass).toBe('KEEPER_NO_NODE');
    expect(exhausted.ran).toHaveLength(2);

    const other = attempts([SESSION_EXPIRED]);
    const otherError = await retryRead(
      'read',
      { max_attempts: 3, max_elapsed_ms: 10_000 },
      new AbortController().signal,
      other.attempt,
      classifyClickHouseError,
    ).catch((e: unknown) => e);
    expect(classifyClickHouseError(otherError).errorClass).toBe('KEEPER_SESSION_EXPIRED');
    expect(other.ran).toHaveLength(1);
  });

  it('without a policy a real 999 No node is attempted once', async () => {
    const once = attempts([NO_NODE]);
    await expect(
      retryRead('read', undefined, new AbortController().signal, once.attempt, classifyClickHouseError),
    ).rejects.toMatchObject({ code: '999' });
    expect(once.ran).toHaveLength(1);
  });
});
