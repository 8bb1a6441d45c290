import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { ManifestError, parseManifest, selectRoute, sqlTargetMode } from '../../src/domain/delivery/manifest.js';
import {
  DEFAULT_OBSERVE_DEADLINE_S,
  DEFAULT_REPLAY_WINDOW_DAYS,
  type ManifestIssue,
  type Route,
} from '../../src/domain/delivery/manifest-types.js';
import { recomputeAuthority } from '../../src/domain/delivery/sealed-authority.js';

/**
 * A clickhouse publication target (mode exchange) and the sealed quality governance
 * settings of its v2 capsule (docs/rules.md#observation-failures, docs/rules.md#bounded-reader,
 * docs/rules.md#successors-and-replay-window, docs/rules.md#capsule-versions; U7).
 */

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Doc = Record<string, any>;

function example(): Doc {
  return {
    version: 1,
    bindings: {
      events_ch: { kind: 'clickhouse', url_env: 'CH_URL' },
      lake: {
        kind: 'clickhouse',
        url_env: 'LAKE_URL',
        secret_arn: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:lake',
      },
      warehouse: { kind: 'postgres', url_env: 'PG_URL' },
    },
    routes: {
      published: {
        source: {
          binding: 'events_ch',
          table: 'analytics.events',
          time_column: 'event_time',
          key_columns: ['event_id'],
        },
        window: { kind: 'fixed', start: '2026-11-01T00:00:00Z', end: '2026-11-02T00:00:00Z' },
        target: { binding: 'lake', table: 'reporting.events_daily', key_columns: ['event_id'], mode: 'exchange' },
        quality: {
          capsule: 'v2',
          unique_keys: true,
          not_null: ['event_id'],
          assertions: [
            { name: 'no_future_events', sql: 'SELECT count() FROM {relation} WHERE event_time > now()', expect: 0 },
          ],
        },
      },
      daily: {
        source: {
          binding: 'events_ch',
          table: 'analytics.events',
          time_column: 'event_time',
          key_columns: ['event_id'],
        },
        window: { kind: 'rolling', days: 1, boundary: 'day' },
        target: { binding: 'warehouse', table: 'dwh.events_daily', key_columns: ['event_id'], mode: 'replace_window' },
        quality: {
          assertions: [
            { name: 'no_future_events', sql: 'SELECT COUNT(*) FROM {staging} WHERE event_time > now()', expect: 0 },
          ],
        },
      },
    },
  };
}

const render = (doc: unknown) => stringify(doc);
const pub = (m: Doc) => m.routes.published as Doc;
const sql = (m: Doc) => m.routes.daily as Doc;
const quality = (m: Doc) => pub(m).quality as Doc;
const assertion = (m: Doc) => quality(m).assertions[0] as Doc;

function parsed(mutate: (m: Doc) => void = () => {}): Route {
  const m = example();
  mutate(m);
  return selectRoute(parseManifest(render(m), 'route.yaml'), 'published').route;
}

function issuesOf(mutate: (m: Doc) => void): ManifestIssue[] {
  const m = example();
  mutate(m);
  try {
    parseManifest(render(m), 'route.yaml');
  } catch (error) {
    expect(error).toBeInstanceOf(ManifestError);
    return [...(error as ManifestError).issues];
  }
  throw new Error('expected the manifest to be refused');
}

describe('a clickhouse exchange route', () => {
  it('parses: database.table target, mode exchange, key columns, default time column, governance defaults', () => {
    const route = parsed();
    expect(route.target).toEqual({
      binding: 'lake',
      table: { schema: 'reporting', name: 'events_daily' },
      keyColumns: ['event_id'],
      timeColumn: 'event_time',
      mode: 'exchange',
    });
    expect(route.quality).toEqual({
      rowCountMatchesReceipts: true,
      uniqueKeys: true,
      notNull: ['event_id'],
      assertions: [
        { name: 'no_future_events', sql: 'SELECT count() FROM {relation} WHERE event_time > now()', expect: 0 },
      ],
      governance: {
        capsule: 2,
        observeDeadlineS: DEFAULT_OBSERVE_DEADLINE_S,
        replayWindowDays: DEFAULT_REPLAY_WINDOW_DAYS,
      },
    });
    expect([DEFAULT_OBSERVE_DEADLINE_S, DEFAULT_REPLAY_WINDOW_DAYS]).toEqual([240, 14]);
    expect(route.quality.governance).not.toHaveProperty('keeperNoNodeRetry');
  });

  it('parses every setting at its bounds into typed fields', () => {
    const high = parsed((m) => {
      quality(m).target_observation = {
        deadline_s: 600,
        keeper_no_node_retry: { max_attempts: 3, max_elapsed_ms: 10_000 },
      };
      quality(m).replay_window_days = 35;
    });
    expect(high.quality.governance).toEqual({
      capsule: 2,
      observeDeadlineS: 600,
      keeperNoNodeRetry: { maxAttempts: 3, maxElapsedMs: 10_000 },
      replayWindowDays: 35,
    });
    const low = parsed((m) => {
      quality(m).target_observation = { deadline_s: 1, keeper_no_node_retry: { max_attempts: 1, max_elapsed_ms: 1 } };
      quality(m).replay_window_days = 1;
    });
    expect(low.quality.governance).toEqual({
      capsule: 2,
      observeDeadlineS: 1,
      keeperNoNodeRetry: { maxAttempts: 1, maxElapsedMs: 1 },
      replayWindowDays: 1,
    });
    // An empty target_observation block keeps the defaults (retry off).
    expect(parsed((m) => (quality(m).target_observation = {})).quality.governance).toEqual({
      capsule: 2,
      observeDeadlineS: 240,
      replayWindowDays: 14,
    });
  });

  it('required: true and enabled: true are accepted as no-ops (every probe is required anyway)', () => {
    const plain = parsed();
    const affirmed = parsed((m) => {
      quality(m).required = true;
      quality(m).enabled = true;
      assertion(m).required = true;
      assertion(m).enabled = true;
    });
    expect(affirmed).toEqual(plain);
  });

  it('a clickhouse binding may be both source and target; merge defaults stay SQL-only (unique_keys false)', () => {
    const route = parsed((m) => {
      pub(m).target.binding = 'events_ch';
      delete quality(m).unique_keys;
    });
    expect(route.target.binding).toBe('events_ch');
    expect(route.quality.uniqueKeys).toBe(false);
  });

  it('an SQL route carries no governance', () => {
    const manifest = parseManifest(render(example()), 'route.yaml');
    expect(selectRoute(manifest, 'daily').route.quality).not.toHaveProperty('governance');
  });

  it('sqlTargetMode: the SQL publication path refuses an exchange route with a stable code', () => {
    expect(sqlTargetMode({ mode: 'merge' })).toBe('merge');
    expect(sqlTargetMode({ mode: 'replace_window' })).toBe('replace_window');
    expect(() => sqlTargetMode(parsed().target)).toThrow(
      expect.objectContaining({ name: 'Cutpoint.ValidationError', code: 'delivery.target_mode_unsupported' }),
    );
  });
});

type Case = [string, (m: Doc) => void, string, string];

const invalid = 'delivery.manifest_invalid';
const modeUnsupported = 'delivery.target_mode_unsupported';
const degrade = 'quality.required_cannot_degrade';
const placeholder = 'quality.placeholder_invalid';
const P = 'routes.published';
const Q = `${P}.quality`;

const cases: Case[] = [
  // target binding kind ⇔ mode
  [
    'exchange into a postgres target',
    (m) => (sql(m).target.mode = 'exchange'),
    'routes.daily.target.mode',
    modeUnsupported,
  ],
  [
    'exchange into an mssql target',
    (m) => ((m.bindings.warehouse.kind = 'mssql'), (sql(m).target.mode = 'exchange')),
    'routes.daily.target.mode',
    modeUnsupported,
  ],
  ['merge into a clickhouse target', (m) => (pub(m).target.mode = 'merge'), `${P}.target.mode`, modeUnsupported],
  [
    'replace_window into a clickhouse target',
    (m) => (pub(m).target.mode = 'replace_window'),
    `${P}.target.mode`,
    modeUnsupported,
  ],
  ['clickhouse target mode missing', (m) => delete pub(m).target.mode, `${P}.target.mode`, invalid],
  ['clickhouse target table unqualified', (m) => (pub(m).target.table = 'events_daily'), `${P}.target.table`, invalid],
  [
    'clickhouse target table in the staging namespace',
    (m) => (pub(m).target.table = 'reporting.cutpoint_stg_abc'),
    `${P}.target.table`,
    invalid,
  ],
  [
    'clickhouse target key_columns missing',
    (m) => delete pub(m).target.key_columns,
    `${P}.target.key_columns`,
    invalid,
  ],
  [
    'clickhouse target time_column invalid',
    (m) => (pub(m).target.time_column = 'a b'),
    `${P}.target.time_column`,
    invalid,
  ],
  // capsule version
  ['quality block missing', (m) => delete pub(m).quality, `${Q}.capsule`, 'quality.capsule_version_required'],
  ['capsule missing', (m) => delete quality(m).capsule, `${Q}.capsule`, 'quality.capsule_version_required'],
  ['capsule v1', (m) => (quality(m).capsule = 'v1'), `${Q}.capsule`, 'quality.capsule_version_unsupported'],
  ['capsule v3', (m) => (quality(m).capsule = 'v3'), `${Q}.capsule`, 'quality.capsule_version_unsupported'],
  ['capsule the number 2', (m) => (quality(m).capsule = 2), `${Q}.capsule`, 'quality.capsule_version_unsupported'],
  ['capsule V2 (case)', (m) => (quality(m).capsule = 'V2'), `${Q}.capsule`, 'quality.capsule_version_unsupported'],
  // v2 settings on an SQL route
  [
    'capsule on an SQL route',
    (m) => (sql(m).quality.capsule = 'v2'),
    'routes.daily.quality.capsule',
    'quality.capsule_unsupported',
  ],
  [
    'target_observation on an SQL route',
    (m) => (sql(m).quality.target_observation = { deadline_s: 60 }),
    'routes.daily.quality.target_observation',
    'quality.capsule_unsupported',
  ],
  [
    'replay_window_days on an SQL route',
    (m) => (sql(m).quality.replay_window_days = 7),
    'routes.daily.quality.replay_window_days',
    'quality.capsule_unsupported',
  ],
  // required quality never degrades (route level)
  ['severity', (m) => (quality(m).severity = 'warn'), `${Q}.severity`, degrade],
  ['severity error (any value)', (m) => (quality(m).severity = 'error'), `${Q}.severity`, degrade],
  ['warn_if', (m) => (quality(m).warn_if = 'row_count < 10'), `${Q}.warn_if`, degrade],
  ['required: false', (m) => (quality(m).required = false), `${Q}.required`, degrade],
  ['required: "yes"', (m) => (quality(m).required = 'yes'), `${Q}.required`, degrade],
  ['enabled: false', (m) => (quality(m).enabled = false), `${Q}.enabled`, degrade],
  ['enabled: 0', (m) => (quality(m).enabled = 0), `${Q}.enabled`, degrade],
  // … nor per assertion
  ['assertion severity', (m) => (assertion(m).severity = 'warn'), `${Q}.assertions[0].severity`, degrade],
  ['assertion warn_if', (m) => (assertion(m).warn_if = 1), `${Q}.assertions[0].warn_if`, degrade],
  ['assertion required: false', (m) => (assertion(m).required = false), `${Q}.assertions[0].required`, degrade],
  ['assertion enabled: false', (m) => (assertion(m).enabled = false), `${Q}.assertions[0].enabled`, degrade],
  // unknown keys stay refused as before
  ['quality key typo on a v2 route', (m) => (quality(m).not_nul = ['event_id']), `${Q}.not_nul`, invalid],
  ['assertion unknown key on a v2 route', (m) => (assertion(m).note = 'x'), `${Q}.assertions[0].note`, invalid],
  [
    'merge rule on an SQL route still holds',
    (m) => ((sql(m).target.mode = 'merge'), (sql(m).quality.unique_keys = false)),
    'routes.daily.quality.unique_keys',
    invalid,
  ],
  // placeholders
  [
    '{staging} on a v2 route',
    (m) => (assertion(m).sql = 'SELECT count() FROM {staging}'),
    `${Q}.assertions[0].sql`,
    placeholder,
  ],
  [
    '{staging} beside {relation} on a v2 route',
    (m) => (assertion(m).sql = 'SELECT count() FROM {relation} JOIN {staging} USING (event_id)'),
    `${Q}.assertions[0].sql`,
    placeholder,
  ],
  [
    'no placeholder on a v2 route',
    (m) => (assertion(m).sql = 'SELECT count() FROM reporting.events_daily'),
    `${Q}.assertions[0].sql`,
    placeholder,
  ],
  [
    'another placeholder on a v2 route',
    (m) => (assertion(m).sql = 'SELECT count() FROM {relation} JOIN {target} USING (event_id)'),
    `${Q}.assertions[0].sql`,
    placeholder,
  ],
  [
    '{relation} on an SQL route',
    (m) => (sql(m).quality.assertions[0].sql = 'SELECT COUNT(*) FROM {relation}'),
    'routes.daily.quality.assertions[0].sql',
    placeholder,
  ],
  [
    'v2 assertion still a single SELECT',
    (m) => (assertion(m).sql = 'SELECT 0 FROM {relation}; DROP TABLE x'),
    `${Q}.assertions[0].sql`,
    invalid,
  ],
  // target_observation
  [
    'target_observation not a mapping',
    (m) => (quality(m).target_observation = 240),
    `${Q}.target_observation`,
    invalid,
  ],
  [
    'target_observation unknown key',
    (m) => (quality(m).target_observation = { deadline: 60 }),
    `${Q}.target_observation.deadline`,
    invalid,
  ],
  [
    'deadline_s zero',
    (m) => (quality(m).target_observation = { deadline_s: 0 }),
    `${Q}.target_observation.deadline_s`,
    invalid,
  ],
  [
    'deadline_s over 600',
    (m) => (quality(m).target_observation = { deadline_s: 601 }),
    `${Q}.target_observation.deadline_s`,
    invalid,
  ],
  [
    'deadline_s fractional',
    (m) => (quality(m).target_observation = { deadline_s: 1.5 }),
    `${Q}.target_observation.deadline_s`,
    invalid,
  ],
  [
    'deadline_s a string',
    (m) => (quality(m).target_observation = { deadline_s: '240' }),
    `${Q}.target_observation.deadline_s`,
    invalid,
  ],
  [
    'retry not a mapping',
    (m) => (quality(m).target_observation = { keeper_no_node_retry: true }),
    `${Q}.target_observation.keeper_no_node_retry`,
    invalid,
  ],
  [
    'retry max_attempts missing',
    (m) => (quality(m).target_observation = { keeper_no_node_retry: { max_elapsed_ms: 100 } }),
    `${Q}.target_observation.keeper_no_node_retry.max_attempts`,
    invalid,
  ],
  [
    'retry max_elapsed_ms missing',
    (m) => (quality(m).target_observation = { keeper_no_node_retry: { max_attempts: 2 } }),
    `${Q}.target_observation.keeper_no_node_retry.max_elapsed_ms`,
    invalid,
  ],
  [
    'retry max_attempts zero',
    (m) => (quality(m).target_observation = { keeper_no_node_retry: { max_attempts: 0, max_elapsed_ms: 100 } }),
    `${Q}.target_observation.keeper_no_node_retry.max_attempts`,
    invalid,
  ],
  [
    'retry max_attempts four',
    (m) => (quality(m).target_observation = { keeper_no_node_retry: { max_attempts: 4, max_elapsed_ms: 100 } }),
    `${Q}.target_observation.keeper_no_node_retry.max_attempts`,
    invalid,
  ],
  [
    'retry max_elapsed_ms zero',
    (m) => (quality(m).target_observation = { keeper_no_node_retry: { max_attempts: 1, max_elapsed_ms: 0 } }),
    `${Q}.target_observation.keeper_no_node_retry.max_elapsed_ms`,
    invalid,
  ],
  [
    'retry max_elapsed_ms over 10000',
    (m) => (quality(m).target_observation = { keeper_no_node_retry: { max_attempts: 1, max_elapsed_ms: 10_001 } }),
    `${Q}.target_observation.keeper_no_node_retry.max_elapsed_ms`,
    invalid,
  ],
  [
    'retry unknown key',
    (m) =>
      (quality(m).target_observation = { keeper_no_node_retry: { max_attempts: 1, max_elapsed_ms: 1, codes: [999] } }),
    `${Q}.target_observation.keeper_no_node_retry.codes`,
    invalid,
  ],
  // replay window
  ['replay_window_days zero', (m) => (quality(m).replay_window_days = 0), `${Q}.replay_window_days`, invalid],
  ['replay_window_days over 35', (m) => (quality(m).replay_window_days = 36), `${Q}.replay_window_days`, invalid],
  ['replay_window_days a string', (m) => (quality(m).replay_window_days = '14'), `${Q}.replay_window_days`, invalid],
];

describe('refusals: each names its path and a stable code, once', () => {
  it.each(cases)('%s → %s', (_label, mutate, path, code) => {
    expect(issuesOf(mutate)).toEqual([expect.objectContaining({ path, code })]);
  });

  it('a target whose binding and mode disagree is reported at target.mode only, not again under quality', () => {
    // Clickhouse binding with an SQL mode and a v2 quality block: one mistake, one issue.
    expect(issuesOf((m) => (pub(m).target.mode = 'merge'))).toHaveLength(1);
    // An SQL binding with mode exchange and an SQL quality block: likewise.
    expect(issuesOf((m) => (sql(m).target.mode = 'exchange'))).toHaveLength(1);
  });

  it('the error carries the first issue code and the house name; all issues are listed in document order', () => {
    const m = example();
    quality(m).severity = 'warn';
    delete quality(m).capsule;
    assertion(m).sql = 'SELECT count() FROM {staging}';
    try {
      parseManifest(render(m), 'route.yaml');
      expect.unreachable();
    } catch (e) {
      const error = e as ManifestError;
      expect(error.name).toBe('Cutpoint.ValidationError');
      expect(error.issues.map((i) => [i.path, i.code])).toEqual([
        [`${Q}.severity`, degrade],
        [`${Q}.capsule`, 'quality.capsule_version_required'],
        [`${Q}.assertions[0].sql`, placeholder],
      ]);
      expect(error.code).toBe(degrade);
      expect(error.message).toMatch(
        /^routes\.published\.quality\.severity: required quality never degrades to a warning/,
      );
    }
  });

  it('messages name paths, never values', () => {
    const secret = 'hunter2-pasted-here';
    const issues = issuesOf((m) => {
      quality(m).capsule = secret;
      quality(m).severity = secret;
      quality(m).warn_if = secret;
      quality(m).required = secret;
      assertion(m).enabled = secret;
      pub(m).target.mode = secret;
      quality(m).target_observation = { deadline_s: secret };
      quality(m).replay_window_days = secret;
    });
    expect(issues.length).toBeGreaterThanOrEqual(8);
    expect(JSON.stringify(issues)).not.toContain('hunter2');
  });
});

describe('the seal covers the governance settings', () => {
  // The sealed manifest digest is SHA-256 of the whole manifest text, so any quality key a
  // route declares — capsule, deadline, retry bounds, replay window — is sealed with it.
  const digestOf = (mutate: (m: Doc) => void) => {
    const m = example();
    mutate(m);
    const text = render(m);
    const route = selectRoute(parseManifest(text, 'route.yaml'), 'published');
    return recomputeAuthority({
      invocationId: 'inv-aaaaaaaaaaaaaaaaaaaaaaaaaa',
      manifestText: text,
      selector: '/cfg/route.yaml#published',
      route,
      targetIdentity: { server: 'ch1', database: 'reporting' },
      workRoot: '/work/root',
    }).manifestDigest;
  };

  it('enabling the retry or changing the deadline or replay window changes the sealed manifest digest', () => {
    const base = digestOf(() => {});
    const variants = [
      digestOf(
        (m) => (quality(m).target_observation = { keeper_no_node_retry: { max_attempts: 1, max_elapsed_ms: 1000 } }),
      ),
      digestOf((m) => (quality(m).target_observation = { deadline_s: 239 })),
      digestOf((m) => (quality(m).replay_window_days = 13)),
    ];
    expect(new Set([base, ...variants]).size).toBe(4);
  });
});

describe('a governed route cannot turn the sealed row count off (docs/rules.md#original-probes, N3)', () => {
  it('row_count_matches_receipts: false is quality.required_cannot_degrade on a v2 route, and still allowed on a SQL route', async () => {
    const { parseManifest } = await import('../../src/domain/delivery/manifest.js');
    const v2 = `version: 1
bindings:
  events_ch: { kind: clickhouse, url_env: CH_URL }
routes:
  daily:
    source: { binding: events_ch, table: src.events, time_column: event_time, key_columns: [event_id] }
    window: { kind: fixed, start: "2026-11-02T00:00:00Z", end: "2026-11-04T00:00:00Z" }
    target: { binding: events_ch, table: pub.events, key_columns: [event_id], mode: exchange }
    quality: { capsule: v2, row_count_matches_receipts: false, unique_keys: true }
`;
    expect(() => parseManifest(v2, 'm.yaml')).toThrow(
      expect.objectContaining({ code: 'quality.required_cannot_degrade' }),
    );
    const sql = v2
      .replace(
        'events_ch, table: pub.events, key_columns: [event_id], mode: exchange',
        'warehouse, table: dwh.events, key_columns: [event_id], mode: replace_window',
      )
      .replace('quality: { capsule: v2, ', 'quality: { ')
      .replace('routes:', '  warehouse: { kind: postgres, url_env: PG_URL }\nroutes:');
    expect(parseManifest(sql, 'm.yaml').routes.daily?.quality.rowCountMatchesReceipts).toBe(false);
  });
});
