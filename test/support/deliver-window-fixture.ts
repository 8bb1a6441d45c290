import type { DeliveryDeps } from '../../src/delivery/deps.js';
import type { BeginInput } from '../../src/delivery/steps/begin.js';
import { parseManifest, selectRoute } from '../../src/domain/delivery/manifest.js';
import { generateEvents, openDeliveryWorld, windowIdsOf, type DeliveryWorld } from './delivery-world.js';

/**
 * The in-process deliver-window tests' one route and source (test/integration/deliver-window*.test.ts):
 * five days of events, the window two of them with rows on both bounds to the millisecond,
 * 50-row chunks in 600-row parts, and a target that already holds a row outside the
 * window (which must survive) and a stale one inside it (which replace_window removes).
 */

export const STEP_MS = 144_000; // 600 rows a day
const GENERATED = 3000; // five days
export const WINDOW = { start: '2026-11-02T00:00:00.000Z', end: '2026-11-04T00:00:00.000Z' };
const START_MS = Date.parse(WINDOW.start);
const END_MS = Date.parse(WINDOW.end);

export const manifestText = `version: 1
bindings:
  events_ch: { kind: clickhouse, url_env: CH_URL }
  warehouse: { kind: postgres, url_env: PG_URL, password_env: PG_PASSWORD }
routes:
  daily:
    source: { binding: events_ch, table: src.events, time_column: event_time, key_columns: [event_id] }
    window: { kind: fixed, start: "2026-11-02T00:00:00Z", end: "2026-11-04T00:00:00Z" }
    target: { binding: warehouse, table: dwh.events, key_columns: [event_id], mode: replace_window }
    quality:
      unique_keys: true
      not_null: [event_id, event_time]
      assertions:
        - name: no_negative_amounts
          sql: "SELECT COUNT(*) FROM {staging} WHERE amount < 0"
          expect: 0
    chunk_rows: 50
    part_rows: 600
`;
export const selector = '/config/route.yaml#daily';
export const route = selectRoute(parseManifest(manifestText, '/config/route.yaml'), 'daily');

export const beginInput = (invocationId: string): BeginInput => ({
  invocationId,
  session: `run-${invocationId.slice(4, 14)}`,
  manifestText,
  selector,
});

export const sourceRows = generateEvents(GENERATED, STEP_MS);
for (const [id, t] of [
  [10_001, START_MS - 1],
  [10_002, START_MS],
  [10_003, END_MS - 1],
  [10_004, END_MS],
] as const) {
  sourceRows.push({ event_id: id, event_time: t, region: 'eu', amount: 1.5, note: 'bound' });
}
export const windowIds = windowIdsOf(sourceRows, WINDOW);

/** The world (one chdb engine per process: once per file) with the target's two pre-existing rows, and the route's deps. */
export async function openWindowWorld(): Promise<{ world: DeliveryWorld; deps: DeliveryDeps }> {
  const world = await openDeliveryWorld({ rows: sourceRows, tables: ['events'] });
  await world.admin.query(
    `INSERT INTO dwh.events VALUES (1, '2026-11-01T00:02:24Z', 'old', 1, 'outside'), (99999, '2026-11-02T12:00:00Z', 'stale', 0, 'inside')`,
  );
  return { world, deps: world.deps(route) };
}
