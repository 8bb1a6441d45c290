// Over ~300 lines since the formatter wrapped it at 120 columns (230 lines before), kept whole:
// one job: planning and running the partition swap of a publication (plan, swap, the index and
// partition checks it needs).
import { PublicationRefusedError } from '../../domain/delivery/target-errors.js';
import { CHUNK_COLUMN } from '../../domain/delivery/target-rules.js';
import {
  decideSwap,
  parseRangeBound,
  publishedInvocationOf,
  publishedMarker,
  windowPartitionNameOf,
  type PartitionFacts,
} from '../../domain/delivery/window-partition.js';
import type { PublicationReceipt, PublishRequest, TableRef } from '../../domain/delivery/target-types.js';
import type { Client } from './locks.js';
import {
  compareBounds,
  FORMAT_COMMENT,
  OBJECT_AS_PARTITION,
  PARTITION_KEY,
  PARTITIONS,
  quoteColumn,
  quoteIdent,
  quoteTable,
  RELATION_NAMED,
  SWAP_COLUMNS,
  SWAP_CONSTRAINTS,
  SWAP_INDEXES,
} from './sql.js';

/**
 * Publication by partition swap (PostgreSQL): a replace_window into a target partitioned
 * by RANGE on its time column publishes by making the stage itself the window's partition
 * — no row is copied. Runs inside the publication transaction (publication.ts), after the
 * receipt check, the target's EXCLUSIVE lock and the stage recheck, and before the
 * receipt insert, so the receipt and the swap commit together.
 *
 * The work that grows with the rows (the row-count scan, the validating scan of the
 * partition's CHECK, the index builds) runs while the target is held only EXCLUSIVE
 * (readers go on); only the catalog-only tail (DETACH, DROP, RENAME, ATTACH, COMMENT)
 * takes the target ACCESS EXCLUSIVE, just before COMMIT. It runs in the publication
 * transaction rather than a separate prepare call: a prepared stage (its chunk column
 * dropped) would no longer be observable by chunk for reconcile if the publication then
 * did not happen; here a rolled-back publication leaves the stage exactly as it was.
 *
 * A default partition is scanned by ATTACH (PostgreSQL proves it holds no row of the new
 * partition): keep it empty or small where windows are swapped.
 */

type KeyType = 'timestamptz' | 'timestamp';
/** PostgreSQL type oids of the range keys a window can be a partition of. */
const KEY_TYPES: Record<string, KeyType> = { '1184': 'timestamptz', '1114': 'timestamp' };

export interface SwapPlan {
  target: TableRef;
  keyType: KeyType;
  /** The window's partition today (exact bounds), detached and dropped by the swap. */
  replaces?: TableRef;
  /** The stable name the stage takes (`windowPartitionNameOf`), in the target's schema. */
  partition: TableRef;
  /** Target columns with NOT NULL. */
  notNull: string[];
  /** ALTER TABLE clauses giving the stage the target's CHECK, PRIMARY KEY, UNIQUE, EXCLUDE constraints. */
  constraints: string[];
  /** CREATE INDEX statements for the target's other indexes, so ATTACH attaches rather than builds them. */
  indexes: string[];
}

export type SwapPlanning = { plan: SwapPlan } | { declined: string } | { partitioned: false };

/**
 * Reads the catalogs (no mutation): can this replace_window swap? `partitioned: false` for
 * a target that is not partitioned (the set-based path, nothing declined).
 */
export async function planSwap(
  client: Client,
  request: PublishRequest,
  targetObjectId: string,
  stageObjectId: string,
): Promise<SwapPlanning> {
  const key = (
    await client.query<{ strategy: string; key_columns: number; key_column: string | null; key_type: string | null }>(
      PARTITION_KEY,
      [targetObjectId],
    )
  ).rows[0];
  if (!key) return { partitioned: false };
  if (request.mode !== 'replace_window') return { declined: 'merge publishes set-based' };
  const keyType = KEY_TYPES[key.key_type ?? ''];
  if (key.strategy !== 'r' || key.key_columns !== 1 || key.key_column !== request.timeColumn) {
    return { declined: `the target is not partitioned by RANGE on ${request.timeColumn} alone` };
  }
  if (!keyType) return { declined: `the partition key ${request.timeColumn} is neither timestamptz nor timestamp` };
  if (request.staging.table.schema !== request.target.schema)
    return { declined: 'the stage is not in the target schema' };

  const columns = await columnsOf(client, targetObjectId);
  const stageColumns = (await columnsOf(client, stageObjectId)).filter((c) => c.name !== CHUNK_COLUMN);
  const same = (a: ColumnRow[], b: ColumnRow[]) =>
    a.length === b.length &&
    a.every((c) => b.some((d) => d.name === c.name && d.type === c.type && d.collation === c.collation));
  if (!same(columns, stageColumns))
    return { declined: "the stage's columns (names, types, collations) differ from the target's" };
  if (columns.some((c) => c.derived)) return { declined: 'the target has generated or identity columns' };
  const cons = (
    await client.query<{ name: string; kind: string; definition: string }>(SWAP_CONSTRAINTS, [targetObjectId])
  ).rows;
  if (cons.some((c) => c.kind === 'f')) return { declined: 'the target has foreign keys' };

  const partitions = (
    await client.query<{ object_id: string; schema: string; name: string; leaf: boolean; bound: string }>(PARTITIONS, [
      targetObjectId,
    ])
  ).rows;
  const bounds = partitions.map((p) =>
    p.bound === 'DEFAULT' ? { from: null, to: null } : (parseRangeBound(p.bound) ?? { from: null, to: null }),
  );
  const window = [request.window.start.toISOString(), request.window.end.toISOString()];
  const compared = (
    await client.query<{ exact: boolean; overlaps: boolean }>(compareBounds(keyType), [
      ...window,
      bounds.map((b) => b.from),
      bounds.map((b) => b.to),
    ])
  ).rows;
  const facts: PartitionFacts[] = partitions.map((p, i) => ({
    name: `${p.schema}.${p.name}`,
    isDefault: p.bound === 'DEFAULT',
    exact: compared[i]?.exact === true,
    overlaps: compared[i]?.overlaps !== false,
    leaf: p.leaf,
  }));
  const byDefault = partitions.find((p) => p.bound === 'DEFAULT');
  const defaultHolds = byDefault
    ? await holdsWindowRows(client, { schema: byDefault.schema, table: byDefault.name }, request)
    : false;
  const exact = partitions.find((_, i) => facts[i]!.exact && !facts[i]!.isDefault);
  const partition = { schema: request.target.schema, table: windowPartitionNameOf(request.target, request.window) };
  const holder = (await client.query<{ object_id: string }>(RELATION_NAMED, [partition.schema, partition.table]))
    .rows[0];
  const decision = decideSwap(
    facts,
    defaultHolds,
    partition.table,
    holder !== undefined && holder.object_id !== exact?.object_id,
  );
  if (!decision.swap) return { declined: decision.reason };

  const printedIndexes = (
    await client.query<{ definition: string; printed: string }>(SWAP_INDEXES, [
      targetObjectId,
      request.target.schema,
      request.target.table,
    ])
  ).rows;
  const stage = quoteTable(request.staging.table);
  return {
    plan: {
      target: request.target,
      keyType,
      ...(exact ? { replaces: { schema: exact.schema, table: exact.name } } : {}),
      partition,
      notNull: columns.filter((c) => c.not_null).map((c) => c.name),
      constraints: cons.map((c) =>
        c.kind === 'c' ? `ADD CONSTRAINT ${quoteIdent(c.name)} ${c.definition}` : `ADD ${c.definition}`,
      ),
      indexes: printedIndexes
        .map((i) => indexOnStage(i.definition, i.printed, stage))
        .filter((s): s is string => s !== undefined),
    },
  };
}

/**
 * Applies the plan: the checks that scan the stage, the stage made the partition's equal,
 * then the catalog-only swap. Refuses (nothing committed) when the stage's rows are not
 * the journal's count, fall outside the window, or are NULL where the target forbids it.
 */
export async function swapWindow(client: Client, request: PublishRequest, plan: SwapPlan): Promise<void> {
  const stage = quoteTable(request.staging.table);
  const time = quoteColumn(request.timeColumn);
  const nullable = plan.notNull.map((c) => `${quoteColumn(c)} IS NULL`).join(' OR ') || 'false';
  const counts = await client.query<{ n: string; outside: string; nulls: string }>(
    `SELECT count(*)::text AS n,
            count(*) FILTER (WHERE ${time} IS NULL OR ${time} < $1::timestamptz OR ${time} >= $2::timestamptz)::text AS outside,
            count(*) FILTER (WHERE ${nullable})::text AS nulls
       FROM ${stage}`,
    [request.window.start.toISOString(), request.window.end.toISOString()],
  );
  const row = counts.rows[0];
  const staged = Number(row?.n ?? -1);
  if (staged !== request.rows)
    throw new PublicationRefusedError(`stage holds ${staged} rows, the journal proved ${request.rows}`);
  if (Number(row?.outside) !== 0)
    throw new PublicationRefusedError(`${row?.outside} staged rows fall outside the window`);
  if (Number(row?.nulls) !== 0)
    throw new PublicationRefusedError(
      `${row?.nulls} staged rows hold NULL in columns the target requires (${plan.notNull.join(', ')})`,
    );

  // One ALTER, one validating scan: the chunk column goes (catalog-only, its index with it),
  // the window CHECK that lets ATTACH skip its scan, the target's constraints, NOT NULL.
  const [lo, hi] = boundLiterals(request, plan.keyType);
  const alter = [
    `DROP COLUMN ${quoteIdent(CHUNK_COLUMN)}`,
    `ADD CONSTRAINT cutpoint_window CHECK (${time} IS NOT NULL AND ${time} >= ${lo} AND ${time} < ${hi})`,
    ...plan.constraints,
    ...plan.notNull.map((c) => `ALTER COLUMN ${quoteColumn(c)} SET NOT NULL`),
  ];
  await client.query(`ALTER TABLE ${stage} ${alter.join(', ')}`);
  for (const statement of plan.indexes) await client.query(statement);

  // The catalog-only tail: the target ACCESS EXCLUSIVE from here to COMMIT.
  const target = quoteTable(plan.target);
  if (plan.replaces) {
    const old = `${quoteIdent(plan.replaces.schema)}.${quoteIdent(plan.replaces.table)}`;
    await client.query(`ALTER TABLE ${target} DETACH PARTITION ${old}`);
    await client.query(`DROP TABLE ${old}`);
  }
  await client.query(`ALTER TABLE ${stage} RENAME TO ${quoteIdent(plan.partition.table)}`);
  const partition = quoteTable(plan.partition);
  await client.query(`ALTER TABLE ${target} ATTACH PARTITION ${partition} FOR VALUES FROM (${lo}) TO (${hi})`);
  await client.query(`ALTER TABLE ${partition} DROP CONSTRAINT cutpoint_window`);
  const comment = await client.query<{ statement: string }>(FORMAT_COMMENT, [
    plan.partition.schema,
    plan.partition.table,
    publishedMarker(request.invocationId),
  ]);
  await client.query(comment.rows[0]!.statement);
}

interface ColumnRow {
  name: string;
  type: string;
  collation: string;
  not_null: boolean;
  derived: boolean;
}

async function columnsOf(client: Client, objectId: string): Promise<ColumnRow[]> {
  return (await client.query<ColumnRow>(SWAP_COLUMNS, [objectId])).rows;
}

async function holdsWindowRows(client: Client, table: TableRef, request: PublishRequest): Promise<boolean> {
  const time = quoteColumn(request.timeColumn);
  const result = await client.query<{ held: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM ${quoteIdent(table.schema)}.${quoteIdent(table.table)} WHERE ${time} >= $1::timestamptz AND ${time} < $2::timestamptz) AS held`,
    [request.window.start.toISOString(), request.window.end.toISOString()],
  );
  return result.rows[0]?.held === true;
}

/**
 * The window's bounds as SQL literals of the key's type (ISO-8601 from `toISOString`: only
 * digits, `-`, `:`, `.`, `T`, `Z`, so nothing to escape); `timestamp` keys get UTC wall time.
 */
function boundLiterals(request: PublishRequest, keyType: KeyType): [string, string] {
  const literal = (d: Date) =>
    keyType === 'timestamp' ? `'${d.toISOString().slice(0, -1)}'::timestamp` : `'${d.toISOString()}'::timestamptz`;
  return [literal(request.window.start), literal(request.window.end)];
}

/**
 * A target index (`CREATE [UNIQUE] INDEX name ON ONLY schema.table USING …`, as
 * `pg_get_indexdef` prints it) rewritten onto the stage, unnamed; undefined when the text is
 * not that shape (ATTACH then builds the index itself: correct, only slower).
 */
export function indexOnStage(definition: string, printedTarget: string, stage: string): string | undefined {
  const on = ` ON ONLY ${printedTarget} USING `;
  const at = definition.indexOf(on);
  const head = /^CREATE (UNIQUE )?INDEX /.exec(definition);
  if (at < 0 || !head) return undefined;
  return `CREATE ${head[1] ?? ''}INDEX ON ${stage} USING ${definition.slice(at + on.length)}`;
}

/**
 * Whether the exact stage object (same object id) is now the target partition named by
 * this invocation's receipt: a partition of the receipt's target, under the window's
 * stable name, carrying the invocation's published marker, and the receipt naming this
 * object as its stage. The partition's ref when it is, else undefined.
 */
export async function attachedPartitionOf(
  client: Client,
  stagingObjectId: string,
  invocationId: string,
  receiptOf: () => Promise<PublicationReceipt | undefined>,
): Promise<TableRef | undefined> {
  const row = (
    await client.query<{
      schema: string;
      name: string;
      marker: string | null;
      parent_schema: string | null;
      parent_name: string | null;
    }>(OBJECT_AS_PARTITION, [stagingObjectId])
  ).rows[0];
  // The catalogs first: only an object that is a partition marked published by this invocation needs the receipt.
  if (!row || row.parent_schema === null || publishedInvocationOf(row.marker) !== invocationId) return undefined;
  const receipt = await receiptOf();
  if (!receipt || receipt.stagingObjectId !== stagingObjectId || receipt.method !== 'partition_swap') return undefined;
  const named = { schema: receipt.target.schema, table: windowPartitionNameOf(receipt.target, receipt.window) };
  const sameParent = row.parent_schema === receipt.target.schema && row.parent_name === receipt.target.table;
  return sameParent && row.schema === named.schema && row.name === named.table ? named : undefined;
}
