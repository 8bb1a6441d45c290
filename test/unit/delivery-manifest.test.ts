import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { ValidationError } from '../../src/domain/errors.js';
import {
  ManifestError,
  parseManifest,
  parseSelector,
  selectRoute,
  selectorText,
} from '../../src/domain/delivery/manifest.js';
import {
  DEFAULT_CHUNK_ROWS,
  DEFAULT_MAX_CONCURRENCY,
  DEFAULT_PART_ROWS,
  type ManifestIssue,
} from '../../src/domain/delivery/manifest-types.js';

/** Tests build deliberately malformed documents, so the data is untyped on purpose. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Doc = Record<string, any>;

/** The documented example, as data: each test mutates a fresh copy and renders YAML. */
function example(): Doc {
  return {
    version: 1,
    bindings: {
      events_ch: {
        kind: 'clickhouse',
        url_env: 'CH_URL',
        username_env: 'CH_USER',
        password_env: 'CH_PASSWORD',
        secret_arn: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:events-ch',
      },
      warehouse: {
        kind: 'mssql',
        url_env: 'MSSQL_URL',
        secret_arn: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:warehouse',
      },
    },
    routes: {
      daily: {
        source: {
          binding: 'events_ch',
          table: 'analytics.events',
          time_column: 'event_time',
          key_columns: ['event_id'],
        },
        window: { kind: 'fixed', start: '2026-11-01T00:00:00Z', end: '2026-11-02T00:00:00Z' },
        target: { binding: 'warehouse', table: 'dbo.events_daily', key_columns: ['event_id'], mode: 'replace_window' },
        quality: {
          row_count_matches_receipts: true,
          unique_keys: true,
          not_null: ['event_id', 'event_time'],
          assertions: [
            { name: 'no_future_events', sql: 'SELECT COUNT(*) FROM {staging} WHERE event_time > now()', expect: 0 },
          ],
        },
        chunk_rows: 50000,
      },
    },
  };
}

const render = (doc: unknown) => stringify(doc);

function issuesOf(text: string): ManifestIssue[] {
  try {
    parseManifest(text, 'route.yaml');
  } catch (error) {
    expect(error).toBeInstanceOf(ManifestError);
    return [...(error as ManifestError).issues];
  }
  throw new Error('expected the manifest to be refused');
}

function refusedWith(mutate: (m: Doc) => void): ManifestIssue[] {
  const m = example();
  mutate(m);
  return issuesOf(render(m));
}

const daily = (m: Doc) => m.routes.daily as Doc;

describe('parseManifest: the documented example', () => {
  it('parses the example in flow style exactly as written in the doc comment', () => {
    const text = `version: 1
bindings:
  events_ch: { kind: clickhouse, url_env: CH_URL, username_env: CH_USER, password_env: CH_PASSWORD, secret_arn: "arn:aws:secretsmanager:eu-west-1:123456789012:secret:events-ch" }
  warehouse: { kind: mssql, url_env: MSSQL_URL }
routes:
  daily:
    source: { binding: events_ch, table: analytics.events, time_column: event_time, key_columns: [event_id] }
    window: { kind: fixed, start: 2026-11-01T00:00:00Z, end: 2026-11-02T00:00:00Z }
    target: { binding: warehouse, table: dbo.events_daily, key_columns: [event_id], mode: replace_window }
    quality: { row_count_matches_receipts: true, unique_keys: true, not_null: [event_id, event_time], assertions: [{ name: no_future_events, sql: "SELECT COUNT(*) FROM {staging} WHERE event_time > now()", expect: 0 }] }
    chunk_rows: 50000
`;
    const manifest = parseManifest(text, 'route.yaml');
    const selected = selectRoute(manifest, 'route.yaml#daily');
    expect(selected.name).toBe('daily');
    expect(selected.route).toEqual({
      name: 'daily',
      source: {
        binding: 'events_ch',
        from: { kind: 'table', table: { schema: 'analytics', name: 'events' } },
        timeColumn: 'event_time',
        keyColumns: ['event_id'],
      },
      window: { kind: 'fixed', start: '2026-11-01T00:00:00Z', end: '2026-11-02T00:00:00Z' },
      target: {
        binding: 'warehouse',
        table: { schema: 'dbo', name: 'events_daily' },
        keyColumns: ['event_id'],
        timeColumn: 'event_time',
        mode: 'replace_window',
      },
      quality: {
        rowCountMatchesReceipts: true,
        uniqueKeys: true,
        notNull: ['event_id', 'event_time'],
        assertions: [
          { name: 'no_future_events', sql: 'SELECT COUNT(*) FROM {staging} WHERE event_time > now()', expect: 0 },
        ],
      },
      chunkRows: 50000,
      partRows: DEFAULT_PART_ROWS,
      maxConcurrency: DEFAULT_MAX_CONCURRENCY,
    });
    expect(selected.sourceBinding).toEqual({
      name: 'events_ch',
      kind: 'clickhouse',
      urlEnv: 'CH_URL',
      usernameEnv: 'CH_USER',
      passwordEnv: 'CH_PASSWORD',
      secretArn: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:events-ch',
    });
    expect(selected.targetBinding).toEqual({ name: 'warehouse', kind: 'mssql', urlEnv: 'MSSQL_URL' });
    expect(manifest.sourceName).toBe('route.yaml');
  });

  it('applies defaults: quality, chunk_rows, target time column', () => {
    const m = example();
    delete daily(m).quality;
    delete daily(m).chunk_rows;
    const route = selectRoute(parseManifest(render(m), 'r.yaml'), 'daily').route;
    expect(route.quality).toEqual({ rowCountMatchesReceipts: true, uniqueKeys: false, notNull: [], assertions: [] });
    expect(route.chunkRows).toBe(DEFAULT_CHUNK_ROWS);
    expect(route.target.timeColumn).toBe('event_time');
    expect(route).toMatchObject({ partRows: DEFAULT_PART_ROWS, maxConcurrency: DEFAULT_MAX_CONCURRENCY });
  });

  it('parts: part_rows and max_concurrency as given; the default part never exceeds 100,000 chunks', () => {
    const m = example();
    daily(m).part_rows = 750_000;
    daily(m).max_concurrency = 12;
    expect(selectRoute(parseManifest(render(m), 'r.yaml'), 'daily').route).toMatchObject({
      partRows: 750_000,
      maxConcurrency: 12,
    });
    const tiny = example();
    daily(tiny).chunk_rows = 2;
    expect(selectRoute(parseManifest(render(tiny), 'r.yaml'), 'daily').route.partRows).toBe(200_000);
  });

  it('merge defaults unique_keys to true; an explicit target time column wins', () => {
    const m = example();
    delete daily(m).quality;
    daily(m).target.mode = 'merge';
    daily(m).target.time_column = 'loaded_for';
    const route = selectRoute(parseManifest(render(m), 'r.yaml'), 'daily').route;
    expect(route.quality.uniqueKeys).toBe(true);
    expect(route.target.timeColumn).toBe('loaded_for');
  });

  it('accepts a query source, a rolling window, a postgres target, several routes and YAML anchors', () => {
    const text = `version: 1
bindings:
  ch: { kind: clickhouse, secret_arn: "arn:aws:secretsmanager:us-east-1:123456789012:secret:ch/prod-AbCd12" }
  pg: { kind: postgres, url_env: PG_URL }
routes:
  weekly:
    source: &src
      binding: ch
      query: "WITH x AS (SELECT * FROM db.t) SELECT * FROM x"
      time_column: ts
      key_columns: [id, part]
    window: { kind: rolling, days: 7, boundary: day }
    target: { binding: pg, table: public.t_weekly, key_columns: [id, part], mode: merge }
  hourly:
    source: *src
    window: { kind: rolling, days: 1, boundary: hour }
    target: { binding: pg, table: public.t_hourly, key_columns: [id], mode: replace_window }
`;
    const manifest = parseManifest(text, 'm.yaml');
    expect(Object.keys(manifest.routes).sort()).toEqual(['hourly', 'weekly']);
    const weekly = selectRoute(manifest, { route: 'weekly' });
    expect(weekly.route.source.from).toEqual({ kind: 'query', sql: 'WITH x AS (SELECT * FROM db.t) SELECT * FROM x' });
    expect(weekly.route.window).toEqual({ kind: 'rolling', days: 7, boundary: 'day' });
    expect(weekly.targetBinding.kind).toBe('postgres');
    expect(selectRoute(manifest, 'hourly').route.source.keyColumns).toEqual(['id', 'part']);
  });
});

describe('parseManifest: YAML syntax errors are delivery.manifest_unparsable with a position', () => {
  it.each([
    ['duplicate key', 'version: 1\nversion: 1\n', 'route.yaml:2:'],
    ['tab indentation', 'version: 1\nbindings:\n\t- a\n', 'route.yaml:3:'],
    ['unterminated quote', 'version: 1\nx: "abc\n', 'route.yaml:'],
    ['two documents', 'version: 1\n---\nversion: 1\n', 'route.yaml:2:'],
    ['unknown tag', 'version: !secret 1\n', 'route.yaml:1:'],
    ['unresolved alias', 'version: *nope\n', 'route.yaml'],
  ])('%s', (_label, text, where) => {
    const [issue] = issuesOf(text);
    expect(issue?.code).toBe('delivery.manifest_unparsable');
    expect(issue?.message.startsWith(where)).toBe(true);
  });

  it('never quotes the offending source text (it may be a pasted secret)', () => {
    const error = (() => {
      try {
        parseManifest('bindings:\n  w: { password: "hunter2\\qsecret" }\n', 'route.yaml');
      } catch (e) {
        return e as ManifestError;
      }
    })();
    expect(error?.code).toBe('delivery.manifest_unparsable');
    expect(error?.message).not.toContain('hunter2');
    expect(error?.message).not.toContain('secret"');
  });

  it('is a ValidationError with the stable house name', () => {
    try {
      parseManifest('a: [', 'route.yaml');
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(ValidationError);
      expect((e as ValidationError).name).toBe('Cutpoint.ValidationError');
      expect((e as ValidationError).code).toBe('delivery.manifest_unparsable');
    }
  });
});

type Case = [string, (m: Doc) => void, string, string];

const invalid = 'delivery.manifest_invalid';
const literal = 'delivery.binding_literal_credential';
const unknownBinding = 'delivery.binding_unknown';

const cases: Case[] = [
  // document
  ['version 2', (m) => (m.version = 2), 'version', invalid],
  ['version missing', (m) => delete m.version, 'version', invalid],
  ['bindings missing', (m) => delete m.bindings, 'bindings', invalid],
  ['routes missing', (m) => delete m.routes, 'routes', invalid],
  ['unknown top-level key', (m) => (m.runtime = {}), 'runtime', invalid],
  // bindings
  ['bindings not a mapping', (m) => (m.bindings = ['a']), 'bindings', invalid],
  ['binding name with capitals', (m) => (m.bindings.Warehouse = m.bindings.warehouse), 'bindings.Warehouse', invalid],
  ['binding not a mapping', (m) => (m.bindings.warehouse = 'MSSQL_URL'), 'bindings.warehouse', invalid],
  ['binding kind missing', (m) => delete m.bindings.warehouse.kind, 'bindings.warehouse.kind', invalid],
  ['binding kind unknown', (m) => (m.bindings.warehouse.kind = 'oracle'), 'bindings.warehouse.kind', invalid],
  ['literal password', (m) => (m.bindings.warehouse.password = 'hunter2'), 'bindings.warehouse.password', literal],
  ['literal url', (m) => (m.bindings.warehouse.url = 'mssql://sa:hunter2@db'), 'bindings.warehouse.url', literal],
  [
    'literal connection string',
    (m) => (m.bindings.warehouse.connection_string = 'Server=db;Password=hunter2'),
    'bindings.warehouse.connection_string',
    literal,
  ],
  ['literal username', (m) => (m.bindings.events_ch.username = 'default'), 'bindings.events_ch.username', literal],
  [
    'an *_env holding a URL',
    (m) => (m.bindings.warehouse.url_env = 'mssql://sa:hunter2@db'),
    'bindings.warehouse.url_env',
    literal,
  ],
  [
    'an *_env holding k=v',
    (m) => (m.bindings.events_ch.password_env = 'Password=hunter2'),
    'bindings.events_ch.password_env',
    literal,
  ],
  [
    'an *_env not an env name',
    (m) => (m.bindings.warehouse.url_env = 'mssql_url'),
    'bindings.warehouse.url_env',
    invalid,
  ],
  ['an *_env not a string', (m) => (m.bindings.warehouse.url_env = 3), 'bindings.warehouse.url_env', invalid],
  [
    'secret_arn of another service',
    (m) => (m.bindings.warehouse.secret_arn = 'arn:aws:ssm:eu-west-1:123456789012:parameter/x'),
    'bindings.warehouse.secret_arn',
    invalid,
  ],
  [
    'neither url_env nor secret_arn',
    (m) => (m.bindings.warehouse = { kind: 'mssql', password_env: 'PW' }),
    'bindings.warehouse',
    invalid,
  ],
  ['unknown binding key', (m) => (m.bindings.warehouse.region = 'eu-west-1'), 'bindings.warehouse.region', invalid],
  // routes
  ['no routes', (m) => (m.routes = {}), 'routes', invalid],
  ['route name invalid', (m) => (m.routes['Daily Run'] = daily(m)), 'routes["Daily Run"]', invalid],
  ['route not a mapping', (m) => (m.routes.daily = 'x'), 'routes.daily', invalid],
  ['route without source', (m) => delete daily(m).source, 'routes.daily.source', invalid],
  ['route without window', (m) => delete daily(m).window, 'routes.daily.window', invalid],
  ['route without target', (m) => delete daily(m).target, 'routes.daily.target', invalid],
  ['route key typo', (m) => (daily(m).chunk_row = 5), 'routes.daily.chunk_row', invalid],
  ['chunk_rows zero', (m) => (daily(m).chunk_rows = 0), 'routes.daily.chunk_rows', invalid],
  ['chunk_rows too large', (m) => (daily(m).chunk_rows = 1_000_001), 'routes.daily.chunk_rows', invalid],
  [
    'chunk_rows over 100,000 (one JSON value a target parses)',
    (m) => (daily(m).chunk_rows = 100_001),
    'routes.daily.chunk_rows',
    invalid,
  ],
  [
    'part_rows below chunk_rows (a part holds whole chunks)',
    (m) => (daily(m).part_rows = 1),
    'routes.daily.part_rows',
    invalid,
  ],
  ['quality block naming no rule', (m) => (daily(m).quality = {}), 'routes.daily.quality', invalid],
  [
    'quality block turning every check off',
    (m) => (daily(m).quality = { row_count_matches_receipts: false, unique_keys: false, not_null: [] }),
    'routes.daily.quality',
    invalid,
  ],
  ['part_rows zero', (m) => (daily(m).part_rows = 0), 'routes.daily.part_rows', invalid],
  [
    'part_rows over 100,000 chunks',
    (m) => ((daily(m).chunk_rows = 10), (daily(m).part_rows = 1_000_010)),
    'routes.daily.part_rows',
    invalid,
  ],
  ['max_concurrency zero', (m) => (daily(m).max_concurrency = 0), 'routes.daily.max_concurrency', invalid],
  ['max_concurrency too large', (m) => (daily(m).max_concurrency = 101), 'routes.daily.max_concurrency', invalid],
  ['chunk_rows fractional', (m) => (daily(m).chunk_rows = 10.5), 'routes.daily.chunk_rows', invalid],
  ['chunk_rows a string', (m) => (daily(m).chunk_rows = '50000'), 'routes.daily.chunk_rows', invalid],
  // source
  [
    'source binding undeclared',
    (m) => (daily(m).source.binding = 'events'),
    'routes.daily.source.binding',
    unknownBinding,
  ],
  [
    'source binding of target kind',
    (m) => (daily(m).source.binding = 'warehouse'),
    'routes.daily.source.binding',
    invalid,
  ],
  ['source binding not a name', (m) => (daily(m).source.binding = 7), 'routes.daily.source.binding', invalid],
  ['source with table and query', (m) => (daily(m).source.query = 'SELECT 1'), 'routes.daily.source', invalid],
  ['source with neither table nor query', (m) => delete daily(m).source.table, 'routes.daily.source', invalid],
  ['source table unqualified', (m) => (daily(m).source.table = 'events'), 'routes.daily.source.table', invalid],
  ['source table three parts', (m) => (daily(m).source.table = 'a.b.c'), 'routes.daily.source.table', invalid],
  [
    'source table with a quote',
    (m) => (daily(m).source.table = 'analytics.ev"ents'),
    'routes.daily.source.table',
    invalid,
  ],
  [
    'source query not a SELECT',
    (m) => {
      delete daily(m).source.table;
      daily(m).source.query = 'DROP TABLE x';
    },
    'routes.daily.source.query',
    invalid,
  ],
  [
    'source query with a second statement',
    (m) => {
      delete daily(m).source.table;
      daily(m).source.query = 'SELECT 1; DROP TABLE x';
    },
    'routes.daily.source.query',
    invalid,
  ],
  [
    'source query empty',
    (m) => {
      delete daily(m).source.table;
      daily(m).source.query = '  ';
    },
    'routes.daily.source.query',
    invalid,
  ],
  ['source time_column missing', (m) => delete daily(m).source.time_column, 'routes.daily.source.time_column', invalid],
  [
    'source time_column invalid',
    (m) => (daily(m).source.time_column = 'event time'),
    'routes.daily.source.time_column',
    invalid,
  ],
  ['source key_columns empty', (m) => (daily(m).source.key_columns = []), 'routes.daily.source.key_columns', invalid],
  [
    'source key_columns a string',
    (m) => (daily(m).source.key_columns = 'event_id'),
    'routes.daily.source.key_columns',
    invalid,
  ],
  [
    'source key_columns duplicate by case',
    (m) => (daily(m).source.key_columns = ['event_id', 'EVENT_ID']),
    'routes.daily.source.key_columns[1]',
    invalid,
  ],
  [
    'source key column too long',
    (m) => (daily(m).source.key_columns = ['a'.repeat(64)]),
    'routes.daily.source.key_columns[0]',
    invalid,
  ],
  ['source unknown key', (m) => (daily(m).source.where = 'x > 1'), 'routes.daily.source.where', invalid],
  // window
  ['window not a mapping', (m) => (daily(m).window = 'daily'), 'routes.daily.window', invalid],
  ['window kind missing', (m) => delete daily(m).window.kind, 'routes.daily.window.kind', invalid],
  ['window kind unknown', (m) => (daily(m).window.kind = 'sliding'), 'routes.daily.window.kind', invalid],
  ['fixed window end missing', (m) => delete daily(m).window.end, 'routes.daily.window.end', invalid],
  [
    'fixed start with an offset',
    (m) => (daily(m).window.start = '2026-11-01T00:00:00+01:00'),
    'routes.daily.window.start',
    invalid,
  ],
  ['fixed start date only', (m) => (daily(m).window.start = '2026-11-01'), 'routes.daily.window.start', invalid],
  [
    'fixed start without seconds',
    (m) => (daily(m).window.start = '2026-11-01T00:00Z'),
    'routes.daily.window.start',
    invalid,
  ],
  [
    'fixed end not a calendar date',
    (m) => (daily(m).window.end = '2026-11-31T00:00:00Z'),
    'routes.daily.window.end',
    invalid,
  ],
  [
    'fixed end equal to start',
    (m) => (daily(m).window.end = '2026-11-01T00:00:00Z'),
    'routes.daily.window.end',
    invalid,
  ],
  ['fixed end before start', (m) => (daily(m).window.end = '2026-10-31T00:00:00Z'), 'routes.daily.window.end', invalid],
  ['fixed window with rolling keys', (m) => (daily(m).window.days = 7), 'routes.daily.window.days', invalid],
  [
    'rolling days zero',
    (m) => (daily(m).window = { kind: 'rolling', days: 0, boundary: 'day' }),
    'routes.daily.window.days',
    invalid,
  ],
  [
    'rolling days too many',
    (m) => (daily(m).window = { kind: 'rolling', days: 367, boundary: 'day' }),
    'routes.daily.window.days',
    invalid,
  ],
  [
    'rolling days a string',
    (m) => (daily(m).window = { kind: 'rolling', days: '7', boundary: 'day' }),
    'routes.daily.window.days',
    invalid,
  ],
  [
    'rolling boundary week',
    (m) => (daily(m).window = { kind: 'rolling', days: 7, boundary: 'week' }),
    'routes.daily.window.boundary',
    invalid,
  ],
  [
    'rolling boundary missing',
    (m) => (daily(m).window = { kind: 'rolling', days: 7 }),
    'routes.daily.window.boundary',
    invalid,
  ],
  [
    'rolling window with a start',
    (m) => (daily(m).window = { kind: 'rolling', days: 7, boundary: 'day', start: '2026-11-01T00:00:00Z' }),
    'routes.daily.window.start',
    invalid,
  ],
  // target
  [
    'target binding undeclared',
    (m) => (daily(m).target.binding = 'dwh'),
    'routes.daily.target.binding',
    unknownBinding,
  ],
  // A clickhouse binding is a target too now, but only by exchange (delivery-manifest-publication.test.ts).
  [
    'target binding of source kind with an SQL mode',
    (m) => (daily(m).target.binding = 'events_ch'),
    'routes.daily.target.mode',
    'delivery.target_mode_unsupported',
  ],
  ['target table unqualified', (m) => (daily(m).target.table = 'events_daily'), 'routes.daily.target.table', invalid],
  [
    'target table in the staging namespace',
    (m) => (daily(m).target.table = 'dbo.CUTPOINT_STG_events'),
    'routes.daily.target.table',
    invalid,
  ],
  [
    'target key column not an identifier',
    (m) => (daily(m).target.key_columns = ['event_id', '1bad']),
    'routes.daily.target.key_columns[1]',
    invalid,
  ],
  ['target key_columns missing', (m) => delete daily(m).target.key_columns, 'routes.daily.target.key_columns', invalid],
  ['target mode missing', (m) => delete daily(m).target.mode, 'routes.daily.target.mode', invalid],
  ['target mode unknown', (m) => (daily(m).target.mode = 'append'), 'routes.daily.target.mode', invalid],
  [
    'target time_column invalid',
    (m) => (daily(m).target.time_column = 'a-b'),
    'routes.daily.target.time_column',
    invalid,
  ],
  ['target unknown key', (m) => (daily(m).target.truncate = true), 'routes.daily.target.truncate', invalid],
  // quality
  ['quality not a mapping', (m) => (daily(m).quality = ['unique_keys']), 'routes.daily.quality', invalid],
  ['quality key typo', (m) => (daily(m).quality.not_nul = ['event_id']), 'routes.daily.quality.not_nul', invalid],
  [
    'row count rule not a boolean',
    (m) => (daily(m).quality.row_count_matches_receipts = 'yes'),
    'routes.daily.quality.row_count_matches_receipts',
    invalid,
  ],
  ['unique_keys not a boolean', (m) => (daily(m).quality.unique_keys = 1), 'routes.daily.quality.unique_keys', invalid],
  [
    'merge without unique keys',
    (m) => {
      daily(m).target.mode = 'merge';
      daily(m).quality.unique_keys = false;
    },
    'routes.daily.quality.unique_keys',
    invalid,
  ],
  [
    'not_null entry invalid',
    (m) => (daily(m).quality.not_null = ['event_id', 'event time']),
    'routes.daily.quality.not_null[1]',
    invalid,
  ],
  [
    'not_null duplicate',
    (m) => (daily(m).quality.not_null = ['event_id', 'Event_Id']),
    'routes.daily.quality.not_null[1]',
    invalid,
  ],
  [
    'assertions not a list',
    (m) => (daily(m).quality.assertions = { a: 1 }),
    'routes.daily.quality.assertions',
    invalid,
  ],
  [
    'assertion not a mapping',
    (m) => (daily(m).quality.assertions = ['SELECT 1']),
    'routes.daily.quality.assertions[0]',
    invalid,
  ],
  [
    'assertion expect missing',
    (m) => delete daily(m).quality.assertions[0].expect,
    'routes.daily.quality.assertions[0].expect',
    invalid,
  ],
  [
    'assertion expect fractional',
    (m) => (daily(m).quality.assertions[0].expect = 0.5),
    'routes.daily.quality.assertions[0].expect',
    invalid,
  ],
  [
    'assertion expect a string',
    (m) => (daily(m).quality.assertions[0].expect = '0'),
    'routes.daily.quality.assertions[0].expect',
    invalid,
  ],
  [
    'assertion name invalid',
    (m) => (daily(m).quality.assertions[0].name = 'No Future'),
    'routes.daily.quality.assertions[0].name',
    invalid,
  ],
  [
    'assertion name duplicate',
    (m) => daily(m).quality.assertions.push({ ...daily(m).quality.assertions[0] }),
    'routes.daily.quality.assertions[1].name',
    invalid,
  ],
  [
    'assertion without {staging}',
    (m) => (daily(m).quality.assertions[0].sql = 'SELECT COUNT(*) FROM dbo.events_daily'),
    'routes.daily.quality.assertions[0].sql',
    invalid,
  ],
  [
    'assertion with another placeholder',
    (m) => (daily(m).quality.assertions[0].sql = 'SELECT COUNT(*) FROM {staging} JOIN {target} ON 1=1'),
    'routes.daily.quality.assertions[0].sql',
    invalid,
  ],
  [
    'assertion not a SELECT',
    (m) => (daily(m).quality.assertions[0].sql = 'DELETE FROM {staging}'),
    'routes.daily.quality.assertions[0].sql',
    invalid,
  ],
  [
    'assertion with two statements',
    (m) => (daily(m).quality.assertions[0].sql = 'SELECT 0 FROM {staging}; SELECT 1'),
    'routes.daily.quality.assertions[0].sql',
    invalid,
  ],
  [
    'assertion unknown key',
    (m) => (daily(m).quality.assertions[0].severity = 'warn'),
    'routes.daily.quality.assertions[0].severity',
    invalid,
  ],
];

describe('parseManifest: what YAML would take silently is refused', () => {
  it.each([
    ['version: 1.0', (t: string) => t.replace('version: 1', 'version: 1.0'), 'version'],
    ['version: 1e0', (t: string) => t.replace('version: 1', 'version: 1e0'), 'version'],
    ['chunk_rows: 0x10', (t: string) => t.replace('chunk_rows: 50000', 'chunk_rows: 0x10'), 'routes.daily.chunk_rows'],
    [
      'chunk_rows: 050000',
      (t: string) => t.replace('chunk_rows: 50000', 'chunk_rows: 050000'),
      'routes.daily.chunk_rows',
    ],
    [
      'a target name followed by a space',
      (t: string) => t.replace('table: dbo.events_daily', 'table: dbo.events_daily '),
      'routes.daily.target.table',
    ],
    [
      'a key column followed by a tab',
      (t: string) => t.replace('- event_id\n', '- event_id\t\n'),
      'routes.daily.source.key_columns[0]',
    ],
  ])('%s → delivery.manifest_invalid at its path, the value never echoed', (_label, edit, path) => {
    const text = edit(render(example()));
    expect(text).not.toBe(render(example()));
    const issues = issuesOf(text);
    expect(issues).toEqual([expect.objectContaining({ path, code: 'delivery.manifest_invalid' })]);
    expect(issues[0]?.message).not.toContain('events_daily');
  });

  it('the same values written plainly are accepted (a comment after a value is not whitespace YAML drops)', () => {
    const text = render(example()).replace('table: dbo.events_daily', 'table: dbo.events_daily # the target');
    expect(selectRoute(parseManifest(text, 'route.yaml'), 'daily').route.target.table).toEqual({
      schema: 'dbo',
      name: 'events_daily',
    });
  });
});

describe('parseManifest: every validation error names its path and a stable code', () => {
  it.each(cases)('%s → %s', (_label, mutate, path, code) => {
    const issues = refusedWith(mutate);
    // Exactly one issue: a mistake is reported where it is, once, without cascades.
    expect(issues).toEqual([expect.objectContaining({ path, code })]);
  });

  it('the documented example message, exactly prefixed', () => {
    const m = example();
    daily(m).target.key_columns = ['event_id', '1bad'];
    expect(() => parseManifest(render(m), 'route.yaml')).toThrow(
      expect.objectContaining({
        code: 'delivery.manifest_invalid',
        message: expect.stringMatching(/^routes\.daily\.target\.key_columns\[1\]: must be an SQL identifier/),
      }),
    );
  });

  it('a document that is not a mapping', () => {
    expect(issuesOf('')).toEqual([{ path: '(document)', code: invalid, message: 'must be a mapping' }]);
    expect(issuesOf('- a\n- b\n')[0]?.path).toBe('(document)');
    expect(issuesOf('1: x\nversion: 1\nbindings: {}\nroutes: {}\n')[0]).toEqual(
      expect.objectContaining({ path: '(document)', message: 'keys must be plain strings' }),
    );
  });

  it('reports every problem, not just the first, in one error', () => {
    const issues = refusedWith((m) => {
      m.bindings.warehouse.password = 'x';
      daily(m).chunk_rows = 0;
      daily(m).target.mode = 'upsert';
    });
    expect(issues.map((i) => i.path)).toEqual([
      'bindings.warehouse.password',
      'routes.daily.target.mode',
      'routes.daily.chunk_rows',
    ]);
    expect(issues[0]?.code).toBe(literal);
  });

  it('a route naming a declared but invalid binding reports the binding, not an unknown reference', () => {
    const issues = refusedWith((m) => (m.bindings.warehouse.kind = 'oracle'));
    expect(issues).toEqual([expect.objectContaining({ path: 'bindings.warehouse.kind' })]);
  });

  it('no message ever contains a credential value', () => {
    const secret = 'hunter2-very-secret';
    const m = example();
    m.bindings.warehouse.password = secret;
    m.bindings.warehouse.url_env = `mssql://sa:${secret}@db`;
    m.bindings.events_ch.connection_string = `Password=${secret}`;
    m.bindings.events_ch.username_env = secret;
    try {
      parseManifest(render(m), 'route.yaml');
      expect.unreachable();
    } catch (e) {
      const error = e as ManifestError;
      expect(error.code).toBe(literal);
      expect(error.message).not.toContain('hunter2');
      expect(JSON.stringify(error.issues)).not.toContain('hunter2');
    }
  });

  it('a __proto__ route name is refused as a name, not merged into an object prototype', () => {
    const text = render(example()).replace('  daily:', '  __proto__:');
    expect(issuesOf(text)[0]).toEqual(expect.objectContaining({ path: 'routes.__proto__', code: invalid }));
  });
});

describe('selectors', () => {
  it('parses <file>#<route>', () => {
    expect(parseSelector('route.yaml#daily')).toEqual({ file: 'route.yaml', route: 'daily' });
    expect(parseSelector('/config/route.yaml#daily')).toEqual({ file: '/config/route.yaml', route: 'daily' });
    expect(parseSelector('/odd#dir/route.yaml#daily')).toEqual({ file: '/odd#dir/route.yaml', route: 'daily' });
    expect(selectorText({ file: '/config/route.yaml', route: 'daily' })).toBe('/config/route.yaml#daily');
  });

  it.each(['route.yaml', '#daily', 'route.yaml#', 'route.yaml#Daily', 'route.yaml#da ily', ''])(
    'refuses %j',
    (text) => {
      expect(() => parseSelector(text)).toThrow(expect.objectContaining({ code: 'delivery.selector_invalid' }));
    },
  );

  it('an absent route is delivery.selector_unknown, including prototype names', () => {
    const manifest = parseManifest(render(example()), 'route.yaml');
    for (const name of ['weekly', 'constructor', 'toString', 'route.yaml#hourly']) {
      expect(() => selectRoute(manifest, name)).toThrow(expect.objectContaining({ code: 'delivery.selector_unknown' }));
    }
    expect(() => selectRoute(manifest, 'weekly')).toThrow(/routes: daily/);
  });
});
