import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dateTime64Param, openClickHouse, type ClickHouseHandle } from '../adapters/clickhouse/client.js';
import { inertFaults } from '../adapters/fault-injector.js';
import { awsPorts } from '../adapters/ports.js';
import { provisionLocal } from '../adapters/provision.js';
import { parseManifest, selectRoute } from '../domain/delivery/manifest.js';
import type { SelectedRoute } from '../domain/delivery/manifest-types.js';
import { startClickHouseHost } from '../local/clickhouse-host.js';
import { configForRuntime } from '../local/runtime-config.js';
import { startLocalRuntime } from '../local/runtime.js';
import type { Ports } from '../ports/index.js';
import { progress } from '../cli/io.js';
import { demoEvents, seedDemoEvents } from './source-events.js';

/**
 * The throw-away world of `cutpoint demo quality` (src/demo/quality-demo.ts): DynamoDB
 * Local and the S3 emulator (in-memory), and the local ClickHouse HOST — embedded
 * ClickHouse (chdb) in its own process behind the HTTP interface, so the bounded reader's
 * child process reaches the same engine as the steps. Source `analytics.events` (3 days of
 * synthetic events) and the published table `pub.events_daily` in an Atomic database,
 * holding one row of its previous generation. All loopback; `close()` stops everything.
 */

/** The variable both bindings name; set in this process only (the reader child inherits it), never printed. */
export const QUALITY_DEMO_CLICKHOUSE_ENV = 'CUTPOINT_DEMO_CLICKHOUSE_URL';
export const QUALITY_DEMO_ROUTE = 'daily';
export const QUALITY_DEMO_TABLE = { database: 'pub', table: 'events_daily' } as const;
/** Short on purpose: the first observation is made to overrun it (docs/rules.md#bounded-reader). */
export const QUALITY_DEMO_DEADLINE_S = 4;
/** The previous generation's one row (an id the source never has): gone once the window is published. */
export const PREDECESSOR_EVENT_ID = 0;

export const QUALITY_DEMO_MANIFEST = `version: 1
bindings:
  events_ch: { kind: clickhouse, url_env: ${QUALITY_DEMO_CLICKHOUSE_ENV} }
  pub_ch: { kind: clickhouse, url_env: ${QUALITY_DEMO_CLICKHOUSE_ENV} }
routes:
  ${QUALITY_DEMO_ROUTE}:
    source: { binding: events_ch, table: analytics.events, time_column: event_time, key_columns: [event_id] }
    window: { kind: rolling, days: 1, boundary: day }
    target: { binding: pub_ch, table: ${QUALITY_DEMO_TABLE.database}.${QUALITY_DEMO_TABLE.table}, key_columns: [event_id], mode: exchange }
    quality:
      capsule: v2
      unique_keys: true
      not_null: [event_id, event_time]
      assertions:
        - name: no_negative_amounts
          sql: "SELECT count() FROM {relation} WHERE amount < 0"
          expect: 0
      target_observation: { deadline_s: ${QUALITY_DEMO_DEADLINE_S} }
    chunk_rows: 1000
    part_rows: 1000
`;

const TARGET_DDL = `CREATE TABLE ${QUALITY_DEMO_TABLE.database}.${QUALITY_DEMO_TABLE.table}
  (event_id UInt64, event_time DateTime64(3, 'UTC'), region String, amount Decimal(18, 4), note Nullable(String))
  ENGINE = MergeTree ORDER BY (event_time, event_id)`;

export interface QualityDemoWorld {
  ports: Ports;
  /** A client of the host over HTTP (seeding and the final count only). */
  ch: ClickHouseHandle;
  manifestFile: string;
  selector: string;
  route: SelectedRoute;
  /** Event ids (text, sorted) the source holds inside `window`. */
  sourceWindowIds(window: { start: number; end: number }): Promise<string[]>;
  /** What `pub.events_daily` holds: every row, distinct keys, rows inside the window, rows whose id is one of `ids`. */
  targetCounts(
    window: { start: number; end: number },
    ids: readonly string[],
  ): Promise<{ rows: number; distinctKeys: number; inWindow: number; matching: number; predecessorRows: number }>;
  close(): Promise<void>;
}

export interface QualityDemoOptions {
  /**
   * The authority and object stores to use (a test passes fresh stores on its run's
   * DynamoDB Local and S3 emulator). Omitted: a throw-away local runtime is started.
   */
  ports?: Ports;
}

/** DynamoDB Local and the S3 emulator, in-memory, stopped with the world. */
async function throwAwayStores(stops: Array<() => Promise<unknown>>): Promise<Ports> {
  const runtime = await startLocalRuntime();
  stops.unshift(() => runtime.stop());
  const config = configForRuntime(runtime, 'cutpoint-demo-quality');
  await provisionLocal(config);
  return awsPorts(config, inertFaults);
}

export async function openQualityDemoWorld(options: QualityDemoOptions = {}): Promise<QualityDemoWorld> {
  const root = await mkdtemp(join(tmpdir(), 'cutpoint-demo-quality-'));
  const stops: Array<() => Promise<unknown>> = [() => rm(root, { recursive: true, force: true })];
  const close = async () => {
    for (const stop of stops) await stop().catch(() => undefined);
    delete process.env[QUALITY_DEMO_CLICKHOUSE_ENV];
  };
  try {
    progress(
      `starting ${options.ports ? '' : 'DynamoDB Local, the S3 emulator and '}the ClickHouse host (chdb in its own process behind HTTP; in-memory/temp, loopback only) …`,
    );
    // Side by side; each registers its own stop, so a failure of one leaves nothing running.
    const [started, stores] = await Promise.allSettled([
      startClickHouseHost({ dataDir: join(root, 'clickhouse') }).then((h) => (stops.unshift(() => h.stop()), h)),
      options.ports ?? throwAwayStores(stops),
    ]);
    if (started.status === 'rejected') throw started.reason;
    if (stores.status === 'rejected') throw stores.reason;
    const host = started.value;
    const ports = stores.value;
    const ch = await openClickHouse({ kind: 'http', url: host.url });
    stops.unshift(() => ch.close());

    const events = demoEvents(ports.clock.now());
    await seedDemoEvents(ch, 'analytics', 'events', events);
    await ch.client.command({ query: `CREATE DATABASE ${QUALITY_DEMO_TABLE.database} ENGINE = Atomic` });
    await ch.client.command({ query: TARGET_DDL });
    const last = events.at(-1)?.event_time ?? 0;
    await ch.client.insert({
      table: `${QUALITY_DEMO_TABLE.database}.${QUALITY_DEMO_TABLE.table}`,
      format: 'JSONEachRow',
      values: [
        {
          event_id: PREDECESSOR_EVENT_ID,
          event_time: dateTime64Param(new Date(last - 1000)),
          region: 'eu',
          amount: 0,
          note: 'previous generation',
        },
      ],
    });
    progress(
      `seeded ${events.length} events over 3 days into analytics.events; ${QUALITY_DEMO_TABLE.database}.${QUALITY_DEMO_TABLE.table} (Atomic database) holds its previous generation`,
    );

    // The bindings name a variable; its value lives in this process (and the reader child it forks) only.
    process.env[QUALITY_DEMO_CLICKHOUSE_ENV] = host.url;
    const manifestFile = join(root, 'route.yaml');
    await writeFile(manifestFile, QUALITY_DEMO_MANIFEST);
    const route = selectRoute(parseManifest(QUALITY_DEMO_MANIFEST, manifestFile), QUALITY_DEMO_ROUTE);
    const range = (w: { start: number; end: number }) => ({
      s: dateTime64Param(new Date(w.start)),
      e: dateTime64Param(new Date(w.end)),
    });
    const one = async <T>(query: string, params: Record<string, unknown>): Promise<T[]> =>
      (await ch.client.query({ query, query_params: params, format: 'JSONEachRow' })).json<T>();
    return {
      ports,
      ch,
      manifestFile,
      selector: `${manifestFile}#${QUALITY_DEMO_ROUTE}`,
      route,
      async sourceWindowIds(window) {
        const rows = await one<{ id: string }>(
          'SELECT toString(event_id) AS id FROM analytics.events WHERE event_time >= {s:DateTime64(3)} AND event_time < {e:DateTime64(3)} ORDER BY id',
          range(window),
        );
        return rows.map((r) => r.id);
      },
      async targetCounts(window, ids) {
        const [row] = await one<Record<string, string>>(
          `SELECT count() AS rows, uniqExact(event_id) AS distinct_keys,
                  countIf(event_time >= {s:DateTime64(3)} AND event_time < {e:DateTime64(3)}) AS in_window,
                  countIf(has({ids:Array(String)}, toString(event_id))) AS matching,
                  countIf(event_id = ${PREDECESSOR_EVENT_ID}) AS predecessor_rows
             FROM ${QUALITY_DEMO_TABLE.database}.${QUALITY_DEMO_TABLE.table}`,
          { ...range(window), ids },
        );
        const n = (k: string) => Number(row?.[k]);
        return {
          rows: n('rows'),
          distinctKeys: n('distinct_keys'),
          inWindow: n('in_window'),
          matching: n('matching'),
          predecessorRows: n('predecessor_rows'),
        };
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
