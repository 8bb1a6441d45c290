import { afterAll, beforeAll } from 'vitest';
import { openClickHouse, type ClickHouseHandle } from '../../src/adapters/clickhouse/client.js';
import { createClickHouseExchangeTarget } from '../../src/adapters/clickhouse/publication-target.js';
import { createClickHouseStageTarget } from '../../src/adapters/clickhouse/publication-stage.js';
import { createClickHouseSource } from '../../src/adapters/clickhouse/source.js';
import { FaultSwitch } from '../../src/adapters/fault-injector.js';
import type { DeliveryDeps } from '../../src/delivery/deps.js';
import type { BeginInput } from '../../src/delivery/steps/begin.js';
import { parseManifest, selectRoute } from '../../src/domain/delivery/manifest.js';
import type { SelectedRoute } from '../../src/domain/delivery/manifest-types.js';
import { seedSourceEvents } from './delivery-source.js';
import { generateEvents, windowIdsOf } from './delivery-world.js';
import { exchangeModeOver } from './exchange-mode.js';
import { freshStores, type TestStores } from './emulators.js';

/**
 * The world of the ClickHouse publication tests (docs/rules.md#exchange-publication), on real
 * components only: one embedded ClickHouse (chdb: one engine per process, so one world per
 * file) holding the source `src.events` and the published table `pub.events` in an Atomic
 * database, DynamoDB Local and the S3 emulator for the journal, custody, capsule, chunks and
 * evidence.
 */

export const WINDOW = { start: '2026-11-02T00:00:00.000Z', end: '2026-11-04T00:00:00.000Z' };
export const STEP_MS = 144_000; // 600 rows a day
export const sourceRows = generateEvents(3000, STEP_MS);
export const windowIds = windowIdsOf(sourceRows, WINDOW);

export function publicationManifest(
  options: { assertion?: string; table?: string; retry?: { max_attempts: number; max_elapsed_ms: number } } = {},
): string {
  const retry = options.retry
    ? `      target_observation: { keeper_no_node_retry: { max_attempts: ${options.retry.max_attempts}, max_elapsed_ms: ${options.retry.max_elapsed_ms} } }\n`
    : '';
  return `version: 1
bindings:
  events_ch: { kind: clickhouse, url_env: CH_URL }
  pub_ch: { kind: clickhouse, url_env: CH_PUB_URL }
routes:
  daily:
    source: { binding: events_ch, table: src.events, time_column: event_time, key_columns: [event_id] }
    window: { kind: fixed, start: "2026-11-02T00:00:00Z", end: "2026-11-04T00:00:00Z" }
    target: { binding: pub_ch, table: pub.${options.table ?? 'events'}, key_columns: [event_id], mode: exchange }
    quality:
      capsule: v2
${retry}      unique_keys: true
      not_null: [event_id, event_time]
      assertions:
        - name: no_negative_amounts
          sql: "${options.assertion ?? 'SELECT count() FROM {relation} WHERE amount < 0'}"
          expect: 0
    chunk_rows: 200
    part_rows: 600
`;
}

export const targetDdl = (
  table: string,
): string => `CREATE TABLE pub.${table} (event_id UInt64, event_time DateTime64(3, 'UTC'), region String, amount Decimal(18, 4), note Nullable(String))
  ENGINE = MergeTree ORDER BY (event_time, event_id)`;

export interface PublicationWorld {
  ch: ClickHouseHandle;
  stores: TestStores;
  faults: FaultSwitch;
  deps(manifestText?: string): DeliveryDeps;
  route(manifestText?: string): SelectedRoute;
  /** A fresh published table `pub.<table>` holding one stale row inside the window (the predecessor generation). */
  createTarget(table: string): Promise<void>;
  beginInput(invocationId: string, manifestText?: string): BeginInput;
  /** `toString(uuid)` of the table under a name in `pub` (undefined when absent). */
  uuidOf(name: string): Promise<string | undefined>;
  /** Event ids (sorted text) `pub.<table>` holds inside the window. */
  publishedWindowIds(table: string): Promise<string[]>;
  close(): Promise<void>;
}

export async function openPublicationWorld(): Promise<PublicationWorld> {
  const ch = await openClickHouse({ kind: 'embedded' });
  await seedSourceEvents(ch, sourceRows);
  await ch.client.command({ query: 'CREATE DATABASE pub' });
  const stores = await freshStores();
  const faults = new FaultSwitch();
  const target = createClickHouseStageTarget(ch, faults);
  const exchange = createClickHouseExchangeTarget(ch, faults);
  const source = createClickHouseSource(ch, { closeHandle: false });
  const route = (text = publicationManifest()) => selectRoute(parseManifest(text, '/config/publish.yaml'), 'daily');
  return {
    ch,
    stores,
    faults,
    route,
    async createTarget(table) {
      await ch.client.command({ query: targetDdl(table) });
      await ch.client.command({
        query: `INSERT INTO pub.${table} VALUES (99999, '2026-11-02 12:00:00.000', 'stale', 0, 'old generation')`,
      });
    },
    deps: (text) => ({ ports: stores.ports, target, mode: exchangeModeOver(exchange), source, route: route(text) }),
    beginInput: (invocationId, text = publicationManifest()) => ({
      invocationId,
      session: `run-${invocationId.slice(4, 14)}`,
      manifestText: text,
      selector: '/config/publish.yaml#daily',
    }),
    async uuidOf(name) {
      const rows = await (
        await ch.client.query({
          query: `SELECT toString(uuid) AS uuid FROM system.tables WHERE database = 'pub' AND name = {name:String}`,
          query_params: { name },
          format: 'JSONEachRow',
        })
      ).json<{ uuid: string }>();
      return rows[0]?.uuid;
    },
    async publishedWindowIds(table) {
      const rows = await (
        await ch.client.query({
          query: `SELECT toString(event_id) AS id FROM pub.${table} WHERE event_time >= parseDateTime64BestEffort({s:String}, 3) AND event_time < parseDateTime64BestEffort({e:String}, 3) ORDER BY id`,
          query_params: { s: WINDOW.start, e: WINDOW.end },
          format: 'JSONEachRow',
        })
      ).json<{ id: string }>();
      return rows.map((r) => r.id).sort();
    },
    close: () => ch.close(),
  };
}

/**
 * The file's one world (chdb allows one engine per process): opened before the file's
 * tests, closed after them. The object returned is filled in by `beforeAll`.
 */
export function usePublicationWorld(): PublicationWorld {
  const world = {} as PublicationWorld;
  beforeAll(async () => {
    Object.assign(world, await openPublicationWorld());
  }, 120_000);
  afterAll(async () => {
    await world.close?.();
  });
  return world;
}
