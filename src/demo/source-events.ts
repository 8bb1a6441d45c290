import { dateTime64Param, type ClickHouseHandle } from '../adapters/clickhouse/client.js';

/** One synthetic event as the demo seeds it into ClickHouse (time in epoch ms). */
export interface DemoEvent {
  event_id: number;
  event_time: number;
  region: string;
  amount: number;
  note: string | null;
}

const DAY_MS = 86_400_000;
const REGIONS = ['eu', 'us', 'apac'] as const;

/**
 * `days` whole UTC days of events ending at the UTC midnight at or before `now`, one every
 * `stepMs` (960 a day by default): deterministic for a given day, so the demo's counts
 * are reproducible. Amounts are exact in Decimal(18, 4); every other note is NULL.
 */
export function demoEvents(now: Date, days = 3, stepMs = 90_000): DemoEvent[] {
  const end = Math.floor(now.getTime() / DAY_MS) * DAY_MS;
  const start = end - days * DAY_MS;
  const events: DemoEvent[] = [];
  for (let t = start, i = 1; t < end; t += stepMs, i++) {
    events.push({
      event_id: i,
      event_time: t + (i % 7) * 1000,
      region: REGIONS[i % REGIONS.length] as string,
      amount: (i % 10_000) / 16,
      note: i % 2 === 0 ? null : `order ${1000 + i}`,
    });
  }
  return events;
}

/** Creates `database.table` in (embedded) ClickHouse and inserts the events in batches. */
export async function seedDemoEvents(
  ch: ClickHouseHandle,
  database: string,
  table: string,
  events: readonly DemoEvent[],
): Promise<void> {
  await ch.client.command({ query: `CREATE DATABASE IF NOT EXISTS \`${database}\`` });
  await ch.client.command({
    query: `CREATE TABLE \`${database}\`.\`${table}\` (event_id UInt64, event_time DateTime64(3, 'UTC'), region String, amount Decimal(18, 4), note Nullable(String))
            ENGINE = MergeTree ORDER BY event_id`,
  });
  const values = events.map((e) => ({ ...e, event_time: dateTime64Param(new Date(e.event_time)) }));
  for (let i = 0; i < values.length; i += 1000) {
    await ch.client.insert({ table: `${database}.${table}`, format: 'JSONEachRow', values: values.slice(i, i + 1000) });
  }
}
