import { dateTime64Param, openClickHouse, type ClickHouseHandle } from '../../src/adapters/clickhouse/client.js';

/** One synthetic event as the delivery tests seed it into ClickHouse (times in epoch ms). */
export interface SourceEvent {
  event_id: number;
  event_time: number;
  region: string;
  amount: number;
  note: string | null;
}

/**
 * Creates `src.events` in the embedded ClickHouse and inserts the events in batches —
 * the source every delivery test reads its window from.
 */
export async function seedSourceEvents(ch: ClickHouseHandle, events: readonly SourceEvent[]): Promise<void> {
  await ch.client.command({ query: 'CREATE DATABASE src' });
  await ch.client.command({
    query: `CREATE TABLE src.events (event_id UInt64, event_time DateTime64(3, 'UTC'), region String, amount Decimal(18, 4), note Nullable(String))
            ENGINE = MergeTree ORDER BY event_id`,
  });
  const values = events.map((r) => ({ ...r, event_time: dateTime64Param(new Date(r.event_time)) }));
  for (let i = 0; i < values.length; i += 1000) {
    await ch.client.insert({ table: 'src.events', format: 'JSONEachRow', values: values.slice(i, i + 1000) });
  }
}

/**
 * Seeds `src.events` in an embedded ClickHouse data directory and lets go of it, so a
 * child process (the real bin) can open the same directory.
 */
export async function seedSourceDirectory(dataDir: string, events: readonly SourceEvent[]): Promise<void> {
  const ch = await openClickHouse({ kind: 'embedded', dataDir });
  try {
    await seedSourceEvents(ch, events);
  } finally {
    await ch.close();
  }
}
