import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { StageColumn } from '../../src/adapters/mssql/bulk-types.js';
import * as ddl from '../../src/adapters/mssql/ddl-statements.js';
import * as load from '../../src/adapters/mssql/load-statements.js';
import * as publish from '../../src/adapters/mssql/publish-statements.js';
import * as swapStatements from '../../src/adapters/mssql/swap-statements.js';
import type { MssqlSwapPlan } from '../../src/adapters/mssql/swap-plan.js';
import { thrownError } from '../../src/adapters/mssql/results.js';
import { THROWN, type Statement } from '../../src/adapters/mssql/sql-text.js';
import type { PublishRequest, StagingRef, TableRef } from '../../src/domain/delivery/target-types.js';
import { ALLOWLIST, checkBatch, checkUnit, parses, REDUCTIONS, splitBatch } from './mssql-tsql-check.js';

/**
 * Every T-SQL statement the SQL Server adapter can emit, parsed offline by node-sql-parser
 * 5.4.0's `transactsql` grammar (see mssql-tsql-check.ts for the named gaps). The builders
 * are enumerated from the statement modules' exports, so a new one fails here until it
 * has generators; each runs with representative names, T-SQL keywords as names and the
 * longest names, every mapped column type and every branch (modes, options, ranges).
 */

interface Names {
  schema: string;
  table: string;
  target: TableRef;
  receipts: TableRef;
  columns: string[];
  key: string[];
  time: string;
}

const NAMES: Record<string, Names> = {
  representative: {
    schema: 'dbo',
    table: 'stg_inv1',
    target: { schema: 'sales', table: 'events' },
    receipts: { schema: 'dbo', table: 'cutpoint_receipts' },
    columns: ['id', 'ts', 'body', 'amount'],
    key: ['id'],
    time: 'ts',
  },
  keywords: {
    schema: 'select',
    table: 'order',
    target: { schema: 'from', table: 'table' },
    receipts: { schema: 'end', table: 'begin' },
    columns: ['rows', 'from', 'end', 'begin', 'key'],
    key: ['rows', 'key'],
    time: 'end',
  },
  longest: {
    schema: `s${'x'.repeat(62)}`,
    table: `_${'9'.repeat(62)}`,
    target: { schema: 'T', table: `t${'_'.repeat(62)}` },
    receipts: { schema: 'r', table: 'r' },
    columns: [`c${'0'.repeat(62)}`, '_'],
    key: ['_'],
    time: `c${'0'.repeat(62)}`,
  },
};
const HOSTILE = ['x]; DROP TABLE y; --', 'a]b', "o'k", '[x]', 'a b', 'a.b', '1x', '', 'a'.repeat(64)];

const SUPPORTED: Array<Omit<StageColumn, 'name'>> = [
  ...[
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
    'datetime',
    'smalldatetime',
  ].map((t) => ({ type_name: t, max_length: 8, precision: 0, scale: 0, collation_name: null })),
  { type_name: 'decimal', max_length: 17, precision: 38, scale: 10, collation_name: null },
  { type_name: 'numeric', max_length: 9, precision: 18, scale: 0, collation_name: null },
  { type_name: 'time', max_length: 5, precision: 16, scale: 7, collation_name: null },
  { type_name: 'datetime2', max_length: 8, precision: 27, scale: 3, collation_name: null },
  { type_name: 'datetimeoffset', max_length: 10, precision: 34, scale: 6, collation_name: null },
  { type_name: 'nvarchar', max_length: -1, precision: 0, scale: 0, collation_name: 'Latin1_General_CI_AS' },
  { type_name: 'nchar', max_length: 20, precision: 0, scale: 0, collation_name: 'Latin1_General_CI_AS' },
  { type_name: 'varchar', max_length: 30, precision: 0, scale: 0, collation_name: 'Latin1_General_100_CI_AS_SC_UTF8' },
  { type_name: 'char', max_length: 3, precision: 0, scale: 0, collation_name: 'Latin1_General_100_BIN2_UTF8' },
];

function stagingOf(n: Names): StagingRef {
  return {
    table: { schema: n.schema, table: n.table },
    objectId: '2147483647',
    invocationId: "inv-'); DROP TABLE x; --",
    owner: "o'wner",
  };
}

function publishOf(n: Names, mode: PublishRequest['mode'], key: string[]): PublishRequest {
  const window = { start: new Date('2026-11-01T10:00:00Z'), end: new Date('2026-11-01T11:00:00Z') };
  return {
    invocationId: 'inv',
    target: n.target,
    window,
    mode,
    keyColumns: key,
    timeColumn: n.time,
    staging: stagingOf(n),
    rows: 7,
    digest: 'f'.repeat(64),
  };
}

/** Each exported builder, with every variant of its statement for one set of names. */
/** Switch plans (swap-plan.ts) for a target partitioned on `n.time`: a heap, and a unique clustered index with NOT NULL columns. */
function swapsOf(n: Names): MssqlSwapPlan[] {
  return [
    { functionName: 'pf_daily', partition: 2, notNull: [], keyType: 'datetime2' },
    {
      functionName: n.table,
      partition: 15_000,
      notNull: [
        { name: n.time, type: 'datetime2(3)' },
        { name: n.columns[0]!, type: 'nvarchar(200) COLLATE Latin1_General_100_CI_AS_SC_UTF8' },
      ],
      clustered: {
        unique: true,
        keys: [
          { name: n.time, descending: false },
          { name: n.columns[0]!, descending: true },
        ],
      },
      keyType: 'datetime',
    },
  ];
}

const BUILDERS: Record<string, (n: Names) => Statement[]> = {
  describeStatement: (n) => [ddl.describeStatement(n.target)],
  targetCheckStatement: (n) => [ddl.targetCheckStatement(n.target)],
  createStagingBatch: (n) => [
    ddl.createStagingBatch({ schema: n.schema, table: n.table }, n.target, 'inv', 'owner', 30_000),
  ],
  identityStatement: () => [ddl.identityStatement()],
  observeStagingStatement: (n) => [ddl.observeStagingStatement({ schema: n.schema, table: n.table })],
  dropStagingBatch: (n) => [
    ddl.dropStagingBatch(stagingOf(n), 5_000),
    ddl.dropStagingBatch(stagingOf(n), 5_000, { receipts: n.receipts }),
  ],
  absenceProofStatement: (n) => [ddl.absenceProofStatement(stagingOf(n))],
  prepareLoadBatch: (n) => [load.prepareLoadBatch(stagingOf(n))],
  loadChunkBatch: (n) => {
    const stage = [
      ...SUPPORTED.map((t, i) => ({ ...t, name: `${n.columns[0]!.slice(0, 50)}_${i}` })),
      { ...SUPPORTED[0]!, name: '_cutpoint_seq' },
    ];
    const columns = stage.slice(0, -1).map((c) => c.name);
    return [load.loadChunkBatch(stagingOf(n), { seq: 2_147_483_647, columns, json: '[]', rows: 0 }, stage)];
  },
  observeChunksBatch: (n) => [
    load.observeChunksBatch(stagingOf(n)),
    load.observeChunksBatch(stagingOf(n), { from: 100_000, to: 200_000 }),
  ],
  stagingFactsBatch: (n) => [
    load.stagingFactsBatch(stagingOf(n), [], []),
    load.stagingFactsBatch(stagingOf(n), n.key, n.columns),
  ],
  publishBatch: (n) => [
    publish.publishBatch(publishOf(n, 'replace_window', []), n.receipts, n.columns, 30_000),
    publish.publishBatch(publishOf(n, 'merge', n.key), n.receipts, n.columns, 30_000),
    publish.publishBatch(publishOf(n, 'merge', n.columns), n.receipts, n.columns, 30_000),
    ...swapsOf(n).map((swap) =>
      publish.publishBatch(publishOf(n, 'replace_window', []), n.receipts, n.columns, 30_000, swap),
    ),
  ],
  partitionLayoutStatement: (n) => [
    swapStatements.partitionLayoutStatement(n.target, stagingOf(n), n.time, publishOf(n, 'replace_window', []).window),
  ],
  probeReceiptBatch: (n) => [publish.probeReceiptBatch(n.receipts, "inv-'; --")],
};

function builderNames(): string[] {
  return [ddl, load, publish, swapStatements].flatMap((m) =>
    Object.entries(m)
      .filter(([, v]) => typeof v === 'function')
      .map(([k]) => k),
  );
}

const ALL = Object.entries(NAMES).flatMap(([names, n]) =>
  Object.entries(BUILDERS).flatMap(([builder, make]) =>
    make(n).map((s, variant) => ({ label: `${builder}#${variant} (${names})`, statement: s })),
  ),
);

describe('T-SQL grammar (node-sql-parser transactsql)', () => {
  it('has generators for every exported statement builder, and nothing else in the statement modules', () => {
    expect(builderNames().sort()).toEqual(Object.keys(BUILDERS).sort());
  });

  it('keeps SQL text in the statement modules: the adapter class and the connection code hold none', () => {
    for (const file of readdirSync('src/adapters/mssql').filter((f) =>
      ['target.ts', 'connection.ts', 'chunk-json.ts'].includes(f),
    )) {
      const code = readFileSync(`src/adapters/mssql/${file}`, 'utf8').replace(/\/\/.*|\/\*[\s\S]*?\*\//g, '');
      expect(code, file).not.toMatch(
        /['"`][^'"`]*\b(SELECT|INSERT|UPDATE|DELETE|EXEC|CREATE|DROP|ALTER|MERGE|TRUNCATE)\s/,
      );
    }
  });

  it.each(ALL.map((a) => [a.label, a.statement] as const))('%s: every statement parses', (_label, statement) => {
    const results = checkBatch(statement.text);
    expect(results.length).toBeGreaterThan(0);
    expect(results.filter((r) => r.error)).toEqual([]);
  });

  it('throws only the declared numbers, and the adapter maps each (but the lock timeout) to a stable error', () => {
    const thrown = new Set(
      ALL.flatMap((a) => [...a.statement.text.matchAll(/THROW (\d+),/g)].map((m) => Number(m[1]))),
    );
    expect([...thrown].sort()).toEqual(Object.values(THROWN).sort());
    // A lock not granted in time stays the cut point's definite EffectFailed (as PostgreSQL's lock_timeout): retryable, nothing applied.
    expect(thrownError({ number: THROWN.lockNotGranted })).toBeUndefined();
    // So does a partition layout that moved between the switch plan and the batch: nothing applied, a retry plans again.
    expect(thrownError({ number: THROWN.partitionLayoutChanged })).toBeUndefined();
    for (const number of [...thrown].filter(
      (n) => n !== THROWN.lockNotGranted && n !== THROWN.partitionLayoutChanged,
    )) {
      const error = thrownError({ number, code: 'EREQUEST' }) as Error & { code?: string };
      expect(error?.name, String(number)).toMatch(/^Cutpoint\./);
      expect(error.code).toMatch(/^delivery\.[a-z_]+$/);
    }
    expect(thrownError({ number: 2627 })).toBeUndefined();
  });

  it('refuses hostile identifiers in every builder before any text exists', () => {
    const base = NAMES.representative!;
    for (const bad of HOSTILE) {
      const variants: Names[] = [
        { ...base, schema: bad, target: { schema: bad, table: 'events' }, receipts: { schema: bad, table: 'r' } },
        { ...base, table: bad, receipts: { schema: 'dbo', table: bad }, target: { schema: 'sales', table: bad } },
      ];
      for (const n of variants) {
        for (const [builder, make] of Object.entries(BUILDERS)) {
          if (builder === 'identityStatement') continue;
          expect(() => make(n), `${builder} with ${JSON.stringify(bad)}`).toThrow(
            expect.objectContaining({ code: 'delivery.invalid_identifier' }),
          );
        }
      }
      const n = { ...base, columns: [bad, 'ok'], key: [bad], time: bad };
      for (const builder of ['stagingFactsBatch', 'publishBatch']) {
        expect(() => BUILDERS[builder]!(n), builder).toThrow(
          expect.objectContaining({ code: 'delivery.invalid_identifier' }),
        );
      }
      const stage = [
        { ...SUPPORTED[0]!, name: bad },
        { ...SUPPORTED[0]!, name: '_cutpoint_seq' },
      ];
      expect(() =>
        load.loadChunkBatch(stagingOf(base), { seq: 0, columns: [bad], json: '[]', rows: 0 }, stage),
      ).toThrow(expect.objectContaining({ code: 'delivery.invalid_identifier' }));
    }
  });

  it('keeps the gaps minimal: every reduction and allowlist shape is used, and every reduction is needed where it is used', () => {
    const units = ALL.flatMap((a) => splitBatch(a.statement.text));
    const results = units.map((u) => ({ unit: u, result: checkUnit(u) }));
    const used = new Set(results.flatMap((r) => [...r.result.reductions, r.result.via]));
    for (const r of REDUCTIONS) expect(used, r.name).toContain(r.name);
    for (const a of ALLOWLIST) expect(used, a.name).toContain(`allowlist ${a.name}`);
    expect(used).toContain('OPENJSON WITH schema');
    for (const { unit, result } of results) {
      for (const name of result.reductions.filter((x) => x !== 'OPENJSON WITH schema')) {
        expect(checkUnit(unit, name).error, `${name} needed for: ${result.text.slice(0, 80)}`).toBeDefined();
      }
      if (result.reductions.includes('OPENJSON WITH schema')) expect(parses(result.text)).toBeDefined();
      if (result.via.startsWith('allowlist')) expect(parses(result.text), result.text).toBeDefined();
    }
    // What is not grammar-checked at all, by shape: exactly the THROW and RETURN statements, and ALTER TABLE … SWITCH.
    const notParsed = new Set(
      results.filter((r) => r.result.via.startsWith('allowlist')).map((r) => r.result.text.split(' ')[0]),
    );
    expect([...notParsed].sort()).toEqual(['ALTER', 'RETURN', 'THROW']);
    expect(
      results.filter((r) => r.result.via === 'allowlist SWITCH').every((r) => / SWITCH TO /.test(r.result.text)),
    ).toBe(true);
  });

  it('fails a broken statement: unbalanced brackets, quotes or parentheses, typos, a bad THROW or OPENJSON entry', () => {
    const good = ALL.find((a) => a.label === 'loadChunkBatch#0 (representative)')!.statement.text;
    const publishText = ALL.find((a) => a.label === 'publishBatch#1 (representative)')!.statement.text;
    const broken: Array<[string, string, string]> = [
      [good, 'DELETE FROM [dbo].[stg_inv1]', 'DELETE FROM [dbo].[stg_inv1'],
      [good, 'DELETE FROM [dbo].[stg_inv1] WHERE [_cutpoint_seq]', 'DELETE FROM [dbo].[stg_inv1] WHERE [_cutpoint_seq'],
      [good, 'DELETE FROM', 'DELETE FORM'],
      [good, 'SELECT ROWCOUNT_BIG() AS inserted;', 'SELECT ROWCOUNT_BIG( AS inserted;'],
      [good, `N'strict $."id_0"'`, `N'strict $."id_0'`],
      [good, ' decimal(38,10) ', ' decimal(38,10 '],
      [good, ' AS JSON', ' AS JSONB'],
      [good, "[c0] int N'strict", "[c0] int N'loose"],
      [good, "[c0] int N'strict", "[c0] int N'strict $.\"a\"', [c0x] int N'strict"],
      [good, "N'+00:00') AS datetime2(3)", "N'+00:00) AS datetime2(3)"],
      [publishText, 'THROW 51005,', 'THROW 51005'],
      [publishText, 'IF @staged <> @rows', 'IF @staged <> <> @rows'],
      [publishText, 'COMMIT TRANSACTION;\n  RETURN;\nEND;', 'COMMIT TRANSACTION;\n  RETURN;'],
      [publishText, 'WHERE NOT EXISTS (SELECT 1', 'WHERE NOT EXISTS (SELECT 1,'],
      [publishText, 'SELECT @staged = COUNT_BIG(*) FROM', 'SELECT @staged = COUNT_BIG(*) FRM'],
    ];
    for (const [base, from, to] of broken) {
      expect(base, from).toContain(from);
      const text = base.replace(from, to);
      expect(
        checkBatch(text).some((r) => r.error),
        `${from} -> ${to}`,
      ).toBe(true);
    }
  });
});
