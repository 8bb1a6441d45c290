import { describe, expect, it } from 'vitest';
import { jsonPath, openJsonColumnOf, typeSpelling, type StageColumn } from '../../src/adapters/mssql/bulk-types.js';
import { loadChunkBatch } from '../../src/adapters/mssql/load-statements.js';
import type { StagingRef } from '../../src/domain/delivery/target-types.js';

/**
 * The chunk load, offline: how every stage column type the adapter can meet is read out of
 * the JSON chunk by OPENJSON (the bulk type mapping), how JSON paths quote any key, how the
 * JSONL bytes become the OPENJSON array (checked before any I/O), and the load batch.
 */
const col = (name: string, type_name: string, extra: Partial<StageColumn> = {}): StageColumn => ({
  name,
  type_name,
  max_length: 0,
  precision: 0,
  scale: 0,
  collation_name: null,
  ...extra,
});

describe('bulk type mapping (OPENJSON WITH)', () => {
  it('reads exact types as themselves with a strict path: 64-bit ints and decimals as text, booleans as bit', () => {
    for (const t of [
      'int',
      'bigint',
      'smallint',
      'tinyint',
      'bit',
      'float',
      'real',
      'money',
      'smallmoney',
      'date',
      'uniqueidentifier',
    ]) {
      expect(openJsonColumnOf(col('v', t), 3)).toEqual({ with: [`[c3] ${t} N'strict $."v"'`], select: 'j.[c3]' });
    }
    // A value such as "18446744073709551615" reaches bigint through SQL Server's conversion (an overflow is an error, not a wrap).
    expect(openJsonColumnOf(col('big', 'BIGINT'), 0).with).toEqual([`[c0] bigint N'strict $."big"'`]);
    expect(openJsonColumnOf(col('amount', 'decimal', { precision: 38, scale: 10 }), 1)).toEqual({
      with: [`[c1] decimal(38,10) N'strict $."amount"'`],
      select: 'j.[c1]',
    });
    expect(openJsonColumnOf(col('n', 'numeric', { precision: 18, scale: 4 }), 2).with).toEqual([
      `[c2] decimal(18,4) N'strict $."n"'`,
    ]);
    expect(openJsonColumnOf(col('t', 'time', { scale: 6 }), 0).with).toEqual([`[c0] time(6) N'strict $."t"'`]);
  });

  it('reads ISO text with Z (or an offset) as datetimeoffset and converts to UTC before it becomes datetime2/datetime', () => {
    expect(openJsonColumnOf(col('ts', 'datetime2', { scale: 3 }), 0)).toEqual({
      with: [`[c0] datetimeoffset(3) N'strict $."ts"'`],
      select: "CAST(SWITCHOFFSET(j.[c0], N'+00:00') AS datetime2(3))",
    });
    expect(openJsonColumnOf(col('ts', 'datetime2', { scale: 7 }), 4).select).toBe(
      "CAST(SWITCHOFFSET(j.[c4], N'+00:00') AS datetime2(7))",
    );
    expect(openJsonColumnOf(col('ts', 'datetime'), 0)).toEqual({
      with: [`[c0] datetimeoffset(3) N'strict $."ts"'`],
      select: "CAST(SWITCHOFFSET(j.[c0], N'+00:00') AS datetime)",
    });
    expect(openJsonColumnOf(col('ts', 'smalldatetime'), 0).select).toBe(
      "CAST(SWITCHOFFSET(j.[c0], N'+00:00') AS smalldatetime)",
    );
    // datetimeoffset keeps the instant and its offset: Z is +00:00.
    expect(openJsonColumnOf(col('at', 'datetimeoffset', { scale: 6 }), 0)).toEqual({
      with: [`[c0] datetimeoffset(6) N'strict $."at"'`],
      select: 'j.[c0]',
    });
  });

  it('reads text twice, as a scalar and AS JSON (both lax), so strings, numbers, arrays and objects all land as text', () => {
    const expected = (i: number, name: string) => ({
      with: [`[c${i}] nvarchar(max) N'lax $."${name}"'`, `[c${i}_json] nvarchar(max) N'lax $."${name}"' AS JSON`],
      select: `COALESCE(j.[c${i}], j.[c${i}_json])`,
    });
    expect(openJsonColumnOf(col('body', 'nvarchar', { max_length: -1 }), 0)).toEqual(expected(0, 'body'));
    expect(openJsonColumnOf(col('code', 'nvarchar', { max_length: 20 }), 1)).toEqual(expected(1, 'code'));
    expect(openJsonColumnOf(col('flag', 'nchar', { max_length: 2 }), 2)).toEqual(expected(2, 'flag'));
    expect(
      openJsonColumnOf(col('v', 'varchar', { max_length: 50, collation_name: 'Latin1_General_100_CI_AS_SC_UTF8' }), 3),
    ).toEqual(expected(3, 'v'));
    expect(
      openJsonColumnOf(col('v', 'char', { max_length: 5, collation_name: 'Latin1_General_100_BIN2_UTF8' }), 4),
    ).toEqual(expected(4, 'v'));
  });

  it('refuses what it cannot load precisely: code-page varchar/char, bytes, xml, json, variants and the rest', () => {
    const refusals: StageColumn[] = [
      col('v', 'varchar', { max_length: 50, collation_name: 'SQL_Latin1_General_CP1_CI_AS' }),
      col('v', 'char', { max_length: 5, collation_name: null }),
      col('v', 'text', { collation_name: 'Latin1_General_100_CI_AS_SC_UTF8' }),
      ...[
        'varbinary',
        'binary',
        'image',
        'xml',
        'json',
        'sql_variant',
        'ntext',
        'timestamp',
        'hierarchyid',
        'geometry',
        'geography',
        'vector',
      ].map((t) => col('v', t)),
    ];
    for (const c of refusals) {
      expect(() => openJsonColumnOf(c, 0), c.type_name).toThrow(
        expect.objectContaining({ name: 'Cutpoint.ValidationError', code: 'delivery.unsupported_column_type' }),
      );
      expect(() => typeSpelling(c), c.type_name).toThrow(
        expect.objectContaining({ code: 'delivery.unsupported_column_type' }),
      );
    }
  });

  it('spells types for describeTable: n-type lengths in characters, max, precision and scale', () => {
    expect(typeSpelling(col('c', 'nvarchar', { max_length: 400 }))).toBe('nvarchar(200)');
    expect(typeSpelling(col('c', 'nvarchar', { max_length: -1 }))).toBe('nvarchar(max)');
    expect(
      typeSpelling(col('c', 'varchar', { max_length: 50, collation_name: 'Latin1_General_100_CI_AS_SC_UTF8' })),
    ).toBe('varchar(50)');
    expect(typeSpelling(col('c', 'datetime2', { scale: 3 }))).toBe('datetime2(3)');
    expect(typeSpelling(col('c', 'numeric', { precision: 18, scale: 4 }))).toBe('numeric(18,4)');
    expect(typeSpelling(col('c', 'int'))).toBe('int');
  });
});

describe('JSON paths', () => {
  it('quote any key: JSON string escaping inside an N-literal with quotes doubled, and round-trip', () => {
    expect(jsonPath('id', 'strict')).toBe(`N'strict $."id"'`);
    const hostile = [
      'a"b',
      "o'k",
      'back\\slash',
      'x]; DROP TABLE y; --',
      "'); DROP TABLE y; --",
      'new\nline',
      'tab\there',
      '$.nested.key',
      'ünï©ødé 🚀',
      '',
      ' ',
    ];
    for (const key of hostile) {
      const path = jsonPath(key, 'lax');
      expect(path.startsWith(`N'lax $."`) && path.endsWith(`"'`)).toBe(true);
      const body = path.slice(2, -1);
      // Inside the literal every quote is doubled: no lone ' can end it early.
      expect(body.replace(/''/g, '')).not.toContain("'");
      expect(JSON.parse(body.replace(/''/g, "'").slice('lax $.'.length))).toBe(key);
    }
    // Hostile names are quoted in the WITH clause too, and the alias is positional, never the name.
    expect(openJsonColumnOf(col("a']b", 'int'), 0).with).toEqual([`[c0] int N'strict $."a'']b"'`]);
  });
});

describe('the load batch', () => {
  const staging: StagingRef = {
    table: { schema: 'dbo', table: 'stg_inv1' },
    objectId: '1234567',
    invocationId: 'inv',
    owner: 'o',
  };
  const stage: StageColumn[] = [
    col('id', 'bigint'),
    col('ts', 'datetime2', { scale: 6 }),
    col('body', 'nvarchar', { max_length: -1 }),
    col('extra', 'int'),
    col('_cutpoint_seq', 'int'),
  ];
  const chunk = {
    seq: 42,
    columns: ['id', 'ts', 'body'],
    json: '[{"id":"1","ts":"2026-11-01T10:00:00Z","body":"x"}]',
    rows: 1,
  };

  it('deletes the seq and inserts the chunk in one set-based OPENJSON statement, then reports the rows inserted', () => {
    const s = loadChunkBatch(staging, chunk, stage);
    expect(s.text).toBe(`SET XACT_ABORT ON;
SET NOCOUNT ON;
DELETE FROM [dbo].[stg_inv1] WHERE [_cutpoint_seq] = @seq;
INSERT INTO [dbo].[stg_inv1] ([id], [ts], [body], [_cutpoint_seq])
SELECT j.[c0], CAST(SWITCHOFFSET(j.[c1], N'+00:00') AS datetime2(6)), COALESCE(j.[c2], j.[c2_json]), @seq
  FROM OPENJSON(@json) WITH (
    [c0] bigint N'strict $."id"',
    [c1] datetimeoffset(6) N'strict $."ts"',
    [c2] nvarchar(max) N'lax $."body"',
    [c2_json] nvarchar(max) N'lax $."body"' AS JSON
  ) AS j;
SELECT ROWCOUNT_BIG() AS inserted;`);
    expect(s.params).toEqual([
      { name: 'seq', type: 'int', value: 42 },
      { name: 'json', type: 'nvarchar', value: chunk.json },
    ]);
  });

  it('refuses, before writing anything, a column the stage lacks, a stage without its chunk column, an unloadable type or a bad name', () => {
    expect(() => loadChunkBatch(staging, { ...chunk, columns: ['id', 'missing'] }, stage)).toThrow(
      expect.objectContaining({ code: 'delivery.staging_binding_changed' }),
    );
    expect(() =>
      loadChunkBatch(
        staging,
        chunk,
        stage.filter((c) => c.name !== '_cutpoint_seq'),
      ),
    ).toThrow(expect.objectContaining({ code: 'delivery.staging_binding_changed' }));
    expect(() =>
      loadChunkBatch(staging, chunk, [...stage.filter((c) => c.name !== 'id'), col('id', 'varbinary')]),
    ).toThrow(expect.objectContaining({ code: 'delivery.unsupported_column_type' }));
    expect(() => loadChunkBatch(staging, { ...chunk, columns: ['id]--'] }, stage)).toThrow(
      expect.objectContaining({ code: 'delivery.invalid_identifier' }),
    );
    expect(() => loadChunkBatch(staging, { ...chunk, columns: ['_cutpoint_seq'] }, stage)).toThrow(
      expect.objectContaining({ code: 'delivery.invalid_identifier' }),
    );
  });
});
