import { describe, expect, it } from 'vitest';
import { SourceUnavailableError } from '../../src/domain/delivery/source-errors.js';
import { TargetUnavailableError } from '../../src/domain/delivery/target-errors.js';
import { isAuthenticationFailure } from '../../src/domain/delivery/auth-failure.js';

const coded = (fields: Record<string, unknown>) => Object.assign(new Error('driver'), fields);

describe("isAuthenticationFailure (by the drivers' codes)", () => {
  it.each([
    ['PostgreSQL 28P01 invalid_password', coded({ code: '28P01' })],
    ['PostgreSQL 28000 invalid_authorization_specification', coded({ code: '28000' })],
    ['SQL Server 18456 on the error', coded({ number: 18456 })],
    ["SQL Server 18456 on mssql's originalError", coded({ code: 'EREQUEST', originalError: { number: 18456 } })],
    ['SQL Server 18456 on originalError.info', coded({ originalError: { info: { number: 18456 } } })],
    ['tedious ELOGIN (login refused in the handshake)', coded({ code: 'ELOGIN' })],
    [
      "ClickHouse 516 AUTHENTICATION_FAILED (the client's digit string)",
      coded({ code: '516', type: 'AUTHENTICATION_FAILED' }),
    ],
    ['ClickHouse 516 as our adapters keep it', { code: 516, type: undefined }],
    [
      'a target error keeping the SQLSTATE as cause',
      new TargetUnavailableError('cannot connect', { cause: { code: '28P01' } }),
    ],
    [
      'a source error keeping the ClickHouse error as cause',
      new SourceUnavailableError('read failed', { cause: coded({ code: '516', type: 'AUTHENTICATION_FAILED' }) }),
    ],
  ])('%s is one', (_case, error) => {
    expect(isAuthenticationFailure(error)).toBe(true);
  });

  it.each([
    ['PostgreSQL 42501 insufficient_privilege', coded({ code: '42501' })],
    ['PostgreSQL 08006 connection failure', coded({ code: '08006' })],
    ['SQL Server 229 permission denied', coded({ number: 229 })],
    ['ClickHouse 497 ACCESS_DENIED', coded({ code: '497', type: 'ACCESS_DENIED' })],
    ['ClickHouse 516 with another type (not trusted structure)', coded({ code: '516', type: 'UNKNOWN_TABLE' })],
    ['a message that only says so', new Error('password authentication failed for user "x" (28P01)')],
    ['a target error without cause', new TargetUnavailableError('cannot connect')],
    ['ECONNREFUSED', coded({ code: 'ECONNREFUSED' })],
    ['not an error', 'Login failed'],
    ['nothing', undefined],
  ])('%s is not', (_case, error) => {
    expect(isAuthenticationFailure(error)).toBe(false);
  });
});
