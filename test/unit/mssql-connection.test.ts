import { describe, expect, it } from 'vitest';
import {
  classifyMssqlFailure,
  describeMssqlError,
  isMssqlPermissionFailure,
  parseMssqlConnection,
} from '../../src/adapters/mssql/connection.js';

describe('connections and failures', () => {
  it('parses a mssql:// URL and an ADO.NET string, keeping every secret part for redaction', () => {
    const url = parseMssqlConnection(
      'mssql://deliverer:p%40ss%3Bw0rd@db.example:1444/warehouse?trustServerCertificate=true',
    );
    expect(url.config).toMatchObject({
      server: 'db.example',
      port: 1444,
      user: 'deliverer',
      password: 'p@ss;w0rd',
      database: 'warehouse',
      options: { encrypt: true, trustServerCertificate: true, useUTC: true },
    });
    expect(url.secrets).toContain('p@ss;w0rd');
    const ado = parseMssqlConnection(
      'Server=db.example,1444;Database=warehouse;User Id=deliverer;Password=s3cret!;Encrypt=true',
    );
    expect(ado.config).toMatchObject({
      server: 'db.example',
      port: 1444,
      user: 'deliverer',
      password: 's3cret!',
      database: 'warehouse',
    });
    expect(ado.secrets).toContain('s3cret!');
    expect(() => parseMssqlConnection('mssql://u:p@h/db?encrypt=maybe')).toThrow(
      expect.objectContaining({ code: 'delivery.mssql_connection_invalid' }),
    );
    expect(() => parseMssqlConnection('   ')).toThrow(expect.objectContaining({ name: 'Cutpoint.ConfigError' }));
  });

  it('classifies: a server error number is definite (XACT_ABORT rolled back), a timeout or lost socket unknown', () => {
    expect(classifyMssqlFailure({ number: 2627, code: 'EREQUEST' })).toBe('definite');
    expect(classifyMssqlFailure({ code: 'EREQUEST', originalError: { info: { number: 1205 } } })).toBe('definite');
    expect(classifyMssqlFailure({ code: 'ELOGIN' })).toBe('definite');
    expect(classifyMssqlFailure({ code: 'ETIMEOUT' })).toBe('unknown');
    expect(classifyMssqlFailure({ code: 'ESOCKET' })).toBe('unknown');
    expect(classifyMssqlFailure({ code: 'ECONNCLOSED' })).toBe('unknown');
    expect(classifyMssqlFailure(new Error('read ECONNRESET'))).toBe('unknown');
    expect(isMssqlPermissionFailure({ number: 229 })).toBe(true);
    expect(isMssqlPermissionFailure({ number: 2627 })).toBe(false);
  });

  it('redacts the connection string, user and password from driver messages', () => {
    const { secrets } = parseMssqlConnection(
      'Server=db.example;Database=w;User Id=deliverer;Password=s3cret!;Encrypt=true',
    );
    const text = describeMssqlError(
      Object.assign(
        new Error(
          "Login failed for user 'deliverer'. Server=db.example;Password=s3cret! mssql://deliverer:s3cret!@db.example/w",
        ),
        {
          code: 'ELOGIN',
        },
      ),
      secrets,
    );
    expect(text).not.toContain('s3cret!');
    expect(text).not.toContain('deliverer');
    expect(text).not.toContain('mssql://');
    expect(text).toContain('ELOGIN');
  });
});
