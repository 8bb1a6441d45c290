import { DynamoDBClient, ScanCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import type pg from 'pg';
import type { CutpointConfig } from '../../src/config.js';

/**
 * Before/after evidence for "mutates nothing": every item of the authority table, read
 * with a plain DynamoDB Scan (not through the journal store, so nothing the store would
 * ignore can hide), and the target as SQL sees it.
 */

/** Every item of the table, sorted by key, as one comparable text (raw attribute values). */
export async function scanTable(config: CutpointConfig): Promise<string> {
  const client = new DynamoDBClient({
    region: config.region,
    ...(config.endpoints.dynamodb
      ? { endpoint: config.endpoints.dynamodb, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }
      : {}),
  });
  try {
    const items: Array<Record<string, AttributeValue>> = [];
    let start: Record<string, AttributeValue> | undefined;
    do {
      const page = await client.send(
        new ScanCommand({ TableName: config.tableName, ConsistentRead: true, ExclusiveStartKey: start }),
      );
      items.push(...(page.Items ?? []));
      start = page.LastEvaluatedKey;
    } while (start);
    const keyOf = (item: Record<string, AttributeValue>) => `${item.pk?.S ?? ''}\u0000${item.sk?.S ?? ''}`;
    items.sort((a, b) => (keyOf(a) < keyOf(b) ? -1 : keyOf(a) > keyOf(b) ? 1 : 0));
    return JSON.stringify(
      items.map((item) => Object.fromEntries(Object.entries(item).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))),
    );
  } finally {
    client.destroy();
  }
}

/** Items of the scan whose partition or sort key mentions `needle` (an invocation id). */
export function itemsMentioning(scan: string, needle: string): unknown[] {
  return (JSON.parse(scan) as Array<Record<string, { S?: string }>>).filter(
    (item) => item.pk?.S?.includes(needle) || item.sk?.S?.includes(needle),
  );
}

export interface TargetSnapshot {
  /** Row count and an md5 over the ordered rows of each table. */
  tables: Record<string, { rows: number; digest: string }>;
  /** The receipt table's rows, ordered. */
  receipts: unknown[];
  /** Every cutpoint_stg_* table in the schema, by name. */
  stages: string[];
}

/** The target's state: data tables of `schema` (count + digest), the receipt table's rows, the owned stages in `schema`. */
export async function targetSnapshot(
  admin: pg.Client,
  schema: string,
  tables: readonly string[],
  receipts: { schema: string; table: string },
): Promise<TargetSnapshot> {
  const out: TargetSnapshot = { tables: {}, receipts: [], stages: [] };
  for (const table of tables) {
    const r = await admin.query<{ n: string; digest: string | null }>(
      `SELECT count(*)::text AS n, md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) AS digest FROM "${schema}"."${table}" t`,
    );
    out.tables[table] = { rows: Number(r.rows[0]?.n), digest: r.rows[0]?.digest ?? '' };
  }
  const exists = await admin.query(
    `SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = $2`,
    [receipts.schema, receipts.table],
  );
  if (exists.rowCount)
    out.receipts = (
      await admin.query(`SELECT * FROM "${receipts.schema}"."${receipts.table}" ORDER BY invocation_id`)
    ).rows;
  const stages = await admin.query<{ relname: string }>(
    `SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname LIKE 'cutpoint\\_stg\\_%' AND c.relkind = 'r' ORDER BY c.relname`,
    [schema],
  );
  out.stages = stages.rows.map((r) => r.relname);
  return out;
}
