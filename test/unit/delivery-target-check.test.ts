import { describe, expect, it } from 'vitest';
import { targetCheckStatement } from '../../src/adapters/mssql/ddl-statements.js';
import { targetObservationOf, type TargetCheckRow } from '../../src/adapters/mssql/results.js';
import { parseManifest, selectRoute } from '../../src/domain/delivery/manifest.js';
import {
  judgeTarget,
  targetCheckOf,
  type TargetCheckRequest,
  type TargetEngineRules,
  type TargetObservation,
} from '../../src/domain/delivery/target-check.js';

/**
 * Begin's read-only target check (src/domain/delivery/target-check.ts): what the adapters
 * observe, judged once for every engine; and the SQL Server adapter's statement and the
 * reading of its rows (no SQL Server runs here: its text is also parsed offline by
 * mssql-grammar.test.ts).
 */

const manifest = parseManifest(
  `version: 1
bindings:
  ch: { kind: clickhouse, url_env: CH_URL }
  wh: { kind: mssql, url_env: WH_URL }
routes:
  daily:
    source: { binding: ch, table: src.events, time_column: event_time, key_columns: [event_id] }
    window: { kind: fixed, start: "2026-11-02T00:00:00Z", end: "2026-11-03T00:00:00Z" }
    target: { binding: wh, table: dwh.fz_t0, key_columns: [event_id, region], time_column: ts, mode: replace_window }
    quality: { not_null: [note] }
`,
  'route.yaml',
);
const request = targetCheckOf(selectRoute(manifest, 'daily').route);
const MSSQL: TargetEngineRules = {
  engine: 'SQL Server',
  systemSchemas: ['sys', 'INFORMATION_SCHEMA'],
  receipts: { schema: 'dbo', table: 'cutpoint_receipts' },
};
const table = (schema: string, name: string, kind: 'table' | 'view' | 'other' = 'table', system = false) => ({
  schema,
  table: name,
  kind,
  system,
});
const ok: TargetObservation = {
  found: [table('dwh', 'fz_t0')],
  columns: ['event_id', 'region', 'ts', 'note', 'amount'],
};
const judged = (observed: TargetObservation, req: TargetCheckRequest = request, rules = MSSQL) => {
  try {
    judgeTarget(req, observed, rules);
    return 'accepted';
  } catch (error) {
    return `${(error as { code: string }).code}: ${(error as Error).message}`;
  }
};

describe('the target check', () => {
  it('names every column the route names on the target, with the field that names it', () => {
    expect(request).toEqual({
      table: { schema: 'dwh', table: 'fz_t0' },
      columns: [
        { name: 'event_id', namedBy: 'target.key_columns' },
        { name: 'region', namedBy: 'target.key_columns' },
        { name: 'ts', namedBy: 'target.time_column' },
        { name: 'note', namedBy: 'quality.not_null' },
      ],
    });
  });

  it('accepts a regular table of a user schema holding every named column, and refuses everything else with its own code', () => {
    expect(judged(ok)).toBe('accepted');
    expect(judged({ found: [], columns: [] })).toMatch(
      /^delivery\.target_table_missing: target table dwh\.fz_t0 does not exist/,
    );
    expect(judged({ found: [table('DWH', 'FZ_T0')], columns: [] })).toMatch(
      /^delivery\.target_table_missing: .*DWH\.FZ_T0 exists, which differs only in case/,
    );
    expect(judged({ ...ok, found: [table('dwh', 'fz_t0', 'view')] })).toMatch(
      /^delivery\.target_not_user_table: .* is a view/,
    );
    expect(judged({ ...ok, found: [table('dwh', 'fz_t0', 'other')] })).toMatch(
      /^delivery\.target_not_user_table: .* not a regular table/,
    );
    expect(judged({ ...ok, found: [table('dwh', 'fz_t0', 'table', true)] })).toMatch(
      /^delivery\.target_not_user_table: .* system object/,
    );
    expect(judged({ ...ok, columns: ['event_id', 'region', 'ts', 'amount'] })).toBe(
      'delivery.target_column_missing: column note named by quality.not_null is not a column of target table dwh.fz_t0',
    );
    expect(judged({ ...ok, columns: ['event_id', 'REGION', 'ts', 'note'] })).toMatch(
      /^delivery\.target_column_missing: column region named by target\.key_columns .*\(REGION exists, which differs only in case\)/,
    );
  });

  it('refuses a system schema and the receipts table whatever the catalogue says, in any case', () => {
    for (const [schema, name] of [
      ['sys', 'objects'],
      ['INFORMATION_SCHEMA', 'TABLES'],
      ['information_schema', 'tables'],
      ['dbo', 'cutpoint_receipts'],
      ['DBO', 'CUTPOINT_RECEIPTS'],
    ]) {
      const req = { ...request, table: { schema: schema!, table: name! } };
      expect(
        judged({ found: [table(schema!, name!)], columns: ['event_id', 'region', 'ts', 'note'] }, req),
        `${schema}.${name}`,
      ).toMatch(/^delivery\.target_not_user_table: /);
    }
    const pg: TargetEngineRules = {
      engine: 'PostgreSQL',
      systemSchemas: ['information_schema'],
      systemPrefixes: ['pg_'],
      receipts: { schema: 'public', table: 'cutpoint_receipts' },
    };
    for (const [schema, name] of [
      ['pg_catalog', 'pg_class'],
      ['pg_toast', 'x'],
      ['public', 'cutpoint_receipts'],
    ]) {
      expect(judged(ok, { ...request, table: { schema: schema!, table: name! } }, pg)).toMatch(
        /^delivery\.target_not_user_table: /,
      );
    }
  });
});

describe('SQL Server: the target check statement and its rows', () => {
  it('binds the names as parameters, matches ignoring case (so case variants are seen) and reads every column', () => {
    const statement = targetCheckStatement({ schema: 'dwh', table: 'fz_t0' });
    expect(statement.params).toEqual([
      { name: 'schema_name', type: 'nvarchar', value: 'dwh' },
      { name: 'table_name', type: 'nvarchar', value: 'fz_t0' },
    ]);
    expect(statement.text).not.toMatch(/fz_t0|dwh/);
    expect(statement.text).toContain('UPPER(s.name) = UPPER(@schema_name) AND UPPER(o.name) = UPPER(@table_name)');
    expect(statement.text).toContain('LEFT JOIN sys.columns');
    expect(() => targetCheckStatement({ schema: 'dwh', table: 'x]; DROP TABLE y; --' })).toThrow(
      expect.objectContaining({ code: 'delivery.invalid_identifier' }),
    );
  });

  it('reads each object once, its kind and whether SQL Server shipped it, and the columns of the exactly named one only', () => {
    const row = (
      schema: string,
      name: string,
      type: string,
      column: string | null,
      shipped = false,
    ): TargetCheckRow => ({
      schema_name: schema,
      table_name: name,
      object_type: type,
      is_ms_shipped: shipped,
      column_name: column,
    });
    const rows = [
      row('DWH', 'FZ_T0', 'U ', 'EVENT_ID'),
      row('dwh', 'fz_t0', 'U ', 'event_id'),
      row('dwh', 'fz_t0', 'U ', 'ts'),
      row('dwh', 'fz_t0', 'U ', 'note'),
    ];
    expect(targetObservationOf(rows, { schema: 'dwh', table: 'fz_t0' })).toEqual({
      found: [table('DWH', 'FZ_T0'), table('dwh', 'fz_t0')],
      columns: ['event_id', 'ts', 'note'],
    });
    expect(
      targetObservationOf(
        [
          row('dwh', 'v', 'V ', 'a'),
          row('dwh', 's', 'SN', null),
          row('dwh', 'd', 'U ', 'a', true),
          row('sys', 'x', 'S ', 'a'),
        ],
        { schema: 'dwh', table: 'v' },
      ).found,
    ).toEqual([
      table('dwh', 'v', 'view'),
      table('dwh', 's', 'other'),
      table('dwh', 'd', 'table', true),
      table('sys', 'x', 'other', true),
    ]);
    // A case variant alone: judged missing, named in the refusal.
    expect(judged(targetObservationOf(rows.slice(0, 1), { schema: 'dwh', table: 'fz_t0' }))).toMatch(
      /^delivery\.target_table_missing: .*DWH\.FZ_T0 exists/,
    );
  });
});
