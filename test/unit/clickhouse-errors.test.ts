import { describe, expect, it } from 'vitest';
import {
  CLICKHOUSE_ERROR_CLASSES,
  classifyClickHouseError,
  observationDiagnosticOf,
  structured,
  type ClickHouseErrorClass,
} from '../../src/domain/clickhouse-errors.js';

/**
 * A server error in the shape the client builds (`ClickHouseError` sets code/type and
 * leaves `name` as 'Error'), but NOT an instance of the driver's class: what the
 * application receives over chdb (measured, test/integration/clickhouse-errors.test.ts).
 */
function serverError(code: string, type: string | undefined, message: string): Error {
  return Object.assign(new Error(message), { code, ...(type !== undefined ? { type } : {}) });
}

/** A Node system error as a socket reports it. */
function systemError(code: string): Error {
  return Object.assign(new Error(`connect ${code} 127.0.0.1:8123`), { code, syscall: 'connect' });
}

// U5 is a governance acceptance case (docs/testing.md#governance-acceptance).
describe('classifyClickHouseError (U5)', () => {
  const rows: Array<[string, unknown, ClickHouseErrorClass, { code?: string; type?: string }]> = [
    [
      '999 No node, prefix stripped by the client',
      serverError('999', 'KEEPER_EXCEPTION', 'No node, path: /clickhouse/x'),
      'KEEPER_NO_NODE',
      { code: '999', type: 'KEEPER_EXCEPTION' },
    ],
    [
      '999 No node, prefix left in by the server',
      serverError('999', 'KEEPER_EXCEPTION', 'Coordination::Exception: No node, path: /x'),
      'KEEPER_NO_NODE',
      { code: '999', type: 'KEEPER_EXCEPTION' },
    ],
    [
      '999 Session expired',
      serverError('999', 'KEEPER_EXCEPTION', 'Session expired'),
      'KEEPER_SESSION_EXPIRED',
      { code: '999', type: 'KEEPER_EXCEPTION' },
    ],
    [
      '999 Session expired with prefix',
      serverError('999', 'KEEPER_EXCEPTION', 'Coordination::Exception: Session expired'),
      'KEEPER_SESSION_EXPIRED',
      { code: '999', type: 'KEEPER_EXCEPTION' },
    ],
    [
      '999 Connection loss',
      serverError('999', 'KEEPER_EXCEPTION', 'Connection loss, path: /x'),
      'KEEPER_CONNECTION_LOSS',
      { code: '999', type: 'KEEPER_EXCEPTION' },
    ],
    [
      '999 any other keeper text',
      serverError('999', 'KEEPER_EXCEPTION', "Can't get data for node '/x': node doesn't exist (No node)"),
      'KEEPER_OTHER',
      { code: '999', type: 'KEEPER_EXCEPTION' },
    ],
    [
      '999 "No node" later in the text only',
      serverError('999', 'KEEPER_EXCEPTION', 'Value passed is non-zero: No node, path: /x'),
      'KEEPER_OTHER',
      { code: '999', type: 'KEEPER_EXCEPTION' },
    ],
    [
      '999 a doubled prefix is stripped once only',
      serverError('999', 'KEEPER_EXCEPTION', 'Coordination::Exception: Coordination::Exception: No node'),
      'KEEPER_OTHER',
      { code: '999', type: 'KEEPER_EXCEPTION' },
    ],
    [
      '999 without a message',
      Object.assign(Object.create(null) as object, { code: '999', type: 'KEEPER_EXCEPTION' }),
      'KEEPER_OTHER',
      { code: '999', type: 'KEEPER_EXCEPTION' },
    ],
    [
      '999 with another type',
      serverError('999', 'UNKNOWN_TABLE', 'No node, path: /x'),
      'UNCLASSIFIED',
      { code: '999', type: 'UNKNOWN_TABLE' },
    ],
    ['999 without a type', serverError('999', undefined, 'No node, path: /x'), 'UNCLASSIFIED', { code: '999' }],
    [
      '159 TIMEOUT_EXCEEDED',
      serverError('159', 'TIMEOUT_EXCEEDED', 'Watching task is executing longer than distributed_ddl_task_timeout'),
      'DDL_TIMEOUT',
      { code: '159', type: 'TIMEOUT_EXCEEDED' },
    ],
    ['159 without a type', serverError('159', undefined, 'timeout'), 'DDL_TIMEOUT', { code: '159' }],
    [
      '60 UNKNOWN_TABLE',
      serverError('60', 'UNKNOWN_TABLE', "Unknown table expression identifier 'd.t'"),
      'UNKNOWN_TABLE',
      { code: '60', type: 'UNKNOWN_TABLE' },
    ],
    [
      '81 UNKNOWN_DATABASE',
      serverError('81', 'UNKNOWN_DATABASE', 'Database d does not exist.'),
      'UNKNOWN_DATABASE',
      { code: '81', type: 'UNKNOWN_DATABASE' },
    ],
    [
      '48 NOT_IMPLEMENTED',
      serverError('48', 'NOT_IMPLEMENTED', 'Memory: renameTable() is not supported.'),
      'NOT_IMPLEMENTED',
      { code: '48', type: 'NOT_IMPLEMENTED' },
    ],
    [
      '497 ACCESS_DENIED',
      serverError('497', 'ACCESS_DENIED', 'default: Not enough privileges.'),
      'ACCESS_DENIED',
      { code: '497', type: 'ACCESS_DENIED' },
    ],
    [
      '394 QUERY_WAS_CANCELLED',
      serverError('394', 'QUERY_WAS_CANCELLED', 'Query was cancelled.'),
      'QUERY_CANCELLED',
      { code: '394', type: 'QUERY_WAS_CANCELLED' },
    ],
    [
      '160 TOO_SLOW',
      serverError('160', 'TOO_SLOW', 'Estimated query execution time is too long'),
      'LIMIT_EXCEEDED',
      { code: '160', type: 'TOO_SLOW' },
    ],
    [
      '241 MEMORY_LIMIT_EXCEEDED',
      serverError('241', 'MEMORY_LIMIT_EXCEEDED', 'Memory limit exceeded'),
      'LIMIT_EXCEEDED',
      { code: '241', type: 'MEMORY_LIMIT_EXCEEDED' },
    ],
    [
      '60 whose type disagrees with the code',
      serverError('60', 'KEEPER_EXCEPTION', 'No node'),
      'UNCLASSIFIED',
      { code: '60', type: 'KEEPER_EXCEPTION' },
    ],
    [
      'another structured code',
      serverError('62', 'SYNTAX_ERROR', 'Syntax error'),
      'SERVER_OTHER',
      { code: '62', type: 'SYNTAX_ERROR' },
    ],
    [
      'a shaped plain object that is no Error at all',
      { code: '999', type: 'KEEPER_EXCEPTION', message: 'No node, path: /x' },
      'KEEPER_NO_NODE',
      { code: '999', type: 'KEEPER_EXCEPTION' },
    ],
    [
      'AbortError by name',
      Object.assign(new Error('This operation was aborted'), { name: 'AbortError' }),
      'ABORTED',
      {},
    ],
    [
      'AbortError although shaped like a 999',
      Object.assign(serverError('999', 'KEEPER_EXCEPTION', 'No node'), { name: 'AbortError' }),
      'ABORTED',
      {},
    ],
    ['ECONNRESET', systemError('ECONNRESET'), 'TRANSPORT', {}],
    ['ETIMEDOUT wrapped as a cause', new Error('fetch failed', { cause: systemError('ETIMEDOUT') }), 'TRANSPORT', {}],
    [
      'ECONNREFUSED inside an AggregateError',
      new AggregateError([systemError('ECONNREFUSED')], 'connect failed'),
      'TRANSPORT',
      {},
    ],
    ['plain Error with the identical text', new Error('No node, path: /clickhouse/x'), 'UNCLASSIFIED', {}],
    [
      'plain Error with the full server text',
      new Error('Code: 999. Coordination::Exception: No node, path: /x. (KEEPER_EXCEPTION)'),
      'UNCLASSIFIED',
      {},
    ],
    ['code as a number', { code: 999, type: 'KEEPER_EXCEPTION', message: 'No node' }, 'UNCLASSIFIED', {}],
    ['code with 6 digits', serverError('999999', 'KEEPER_EXCEPTION', 'No node'), 'UNCLASSIFIED', {}],
    ['code with a sign', serverError('-999', 'KEEPER_EXCEPTION', 'No node'), 'UNCLASSIFIED', {}],
    ['lower-case type', serverError('999', 'keeper_exception', 'No node'), 'UNCLASSIFIED', {}],
    ['type that is not a string', { code: '999', type: 42, message: 'No node' }, 'UNCLASSIFIED', {}],
    ['a string', 'Code: 999. No node', 'UNCLASSIFIED', {}],
    ['null', null, 'UNCLASSIFIED', {}],
    ['undefined', undefined, 'UNCLASSIFIED', {}],
  ];

  it.each(rows)('%s', (_label, error, errorClass, facts) => {
    expect(classifyClickHouseError(error)).toEqual({ errorClass, ...facts });
  });

  it('our aborted signal makes any failure ABORTED, even a structured 999 No node', () => {
    const noNode = serverError('999', 'KEEPER_EXCEPTION', 'No node, path: /x');
    expect(classifyClickHouseError(noNode, { aborted: true })).toEqual({ errorClass: 'ABORTED' });
    expect(classifyClickHouseError(new Error('The user aborted a request.'), { aborted: true })).toEqual({
      errorClass: 'ABORTED',
    });
    expect(classifyClickHouseError(new Error('The user aborted a request.'), { aborted: false })).toEqual({
      errorClass: 'UNCLASSIFIED',
    });
    expect(classifyClickHouseError(noNode, { aborted: false })).toEqual({
      errorClass: 'KEEPER_NO_NODE',
      code: '999',
      type: 'KEEPER_EXCEPTION',
    });
  });

  it('never looks at instanceof: a subclass and a foreign prototype classify alike', () => {
    class ForeignClickHouseError extends Error {
      constructor(
        message: string,
        readonly code: string,
        readonly type: string,
      ) {
        super(message);
      }
    }
    const foreign = new ForeignClickHouseError('No node, path: /x', '999', 'KEEPER_EXCEPTION');
    expect(foreign.name).toBe('Error');
    expect(classifyClickHouseError(foreign).errorClass).toBe('KEEPER_NO_NODE');
  });
});

describe('structured', () => {
  it('accepts 1–5 digit codes with an absent or upper-case type, and nothing else', () => {
    expect(structured({ code: '9' })).toBe(true);
    expect(structured({ code: '99999', type: 'A_1' })).toBe(true);
    expect(structured({ code: '' })).toBe(false);
    expect(structured({ code: '12a' })).toBe(false);
    expect(structured({ code: '999', type: '1ABC' })).toBe(false);
    expect(structured({ code: '999', type: '' })).toBe(false);
    expect(structured({ code: 'ECONNRESET' })).toBe(false);
    expect(structured(Object.assign(new Error('x'), { code: '999', type: 'KEEPER_EXCEPTION' }))).toBe(true);
  });
});

describe('observationDiagnosticOf', () => {
  it('names the keeper, timeout and other target failures apart; a publication observation has one code', () => {
    const target = Object.fromEntries(CLICKHOUSE_ERROR_CLASSES.map((c) => [c, observationDiagnosticOf(c, 'target')]));
    expect(target).toEqual({
      ABORTED: 'quality.target_observation_timeout',
      TRANSPORT: 'quality.target_observation_failed',
      UNCLASSIFIED: 'quality.target_observation_failed',
      KEEPER_NO_NODE: 'quality.target_observation_keeper_no_node',
      KEEPER_SESSION_EXPIRED: 'quality.target_observation_keeper_other',
      KEEPER_CONNECTION_LOSS: 'quality.target_observation_keeper_other',
      KEEPER_OTHER: 'quality.target_observation_keeper_other',
      DDL_TIMEOUT: 'quality.target_observation_timeout',
      UNKNOWN_TABLE: 'quality.target_observation_failed',
      UNKNOWN_DATABASE: 'quality.target_observation_failed',
      NOT_IMPLEMENTED: 'quality.target_observation_failed',
      ACCESS_DENIED: 'quality.target_observation_failed',
      QUERY_CANCELLED: 'quality.target_observation_failed',
      LIMIT_EXCEEDED: 'quality.target_observation_failed',
      SERVER_OTHER: 'quality.target_observation_failed',
    });
    for (const c of CLICKHOUSE_ERROR_CLASSES)
      expect(observationDiagnosticOf(c, 'publication')).toBe('publication.observation_failed');
  });
});
