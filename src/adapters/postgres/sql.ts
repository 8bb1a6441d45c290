import type { TableRef } from '../../domain/delivery/target-types.js';
import { assertIdentifier, assertTableRef, CHUNK_COLUMN } from '../../domain/delivery/target-rules.js';

/**
 * PostgreSQL identifier quoting. Identifiers are validated first (`assertIdentifier`), so
 * the doubling of `"` never matters in practice; it is kept so that this function alone
 * is always safe.
 */
export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

export function quoteTable(ref: TableRef): string {
  assertTableRef(ref);
  return `${quoteIdent(ref.schema)}.${quoteIdent(ref.table)}`;
}

export function quoteColumn(name: string): string {
  return quoteIdent(assertIdentifier(name, 'column'));
}

export const QUOTED_CHUNK = quoteIdent(CHUNK_COLUMN);

/**
 * Resolves a table by exact schema and name through the catalogs (no search_path, no
 * ACL error for a schema the principal may not use): the object id and its owner marker.
 */
export const LOOKUP_TABLE = `
SELECT c.oid::text AS object_id, pg_catalog.obj_description(c.oid, 'pg_class') AS marker
  FROM pg_catalog.pg_class c
  JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
 WHERE n.nspname = $1 AND c.relname = $2 AND c.relkind IN ('r', 'p')`;

/**
 * The target check (`TargetPort.checkTarget`): every relation whose schema and name equal
 * the route's ignoring case (so a name that differs only in case is named in the refusal),
 * its kind, and — for the exact one — its column names.
 */
export const TARGET_CANDIDATES = `
SELECT n.nspname AS schema, c.relname AS name, c.relkind::text AS kind,
       CASE WHEN n.nspname = $1 AND c.relname = $2 THEN
         (SELECT pg_catalog.array_agg(a.attname::text ORDER BY a.attnum) FROM pg_catalog.pg_attribute a
           WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped) END AS columns
  FROM pg_catalog.pg_class c
  JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
 WHERE pg_catalog.lower(n.nspname) = pg_catalog.lower($1) AND pg_catalog.lower(c.relname) = pg_catalog.lower($2)
   AND c.relkind IN ('r', 'p', 'v', 'm', 'f')`;

export const DESCRIBE_COLUMNS = `
SELECT a.attname AS name, pg_catalog.format_type(a.atttypid, a.atttypmod) AS type, NOT a.attnotnull AS nullable
  FROM pg_catalog.pg_attribute a
 WHERE a.attrelid = $1::oid AND a.attnum > 0 AND NOT a.attisdropped
 ORDER BY a.attnum`;

/**
 * Can this principal tell an absent object from one it may not see? It needs to read the
 * catalogs and to use the schema (PostgreSQL refuses name lookups in a schema without
 * USAGE). A schema that does not exist proves its tables absent when pg_namespace is
 * readable. Also reports whether the exact object id still exists anywhere.
 */
export const ABSENCE_PROOF = `
SELECT pg_catalog.has_table_privilege('pg_catalog.pg_class', 'SELECT') AS catalog_readable,
       pg_catalog.has_table_privilege('pg_catalog.pg_namespace', 'SELECT') AS namespace_readable,
       (SELECT pg_catalog.has_schema_privilege(n.oid, 'USAGE') FROM pg_catalog.pg_namespace n WHERE n.nspname = $1) AS schema_usage,
       EXISTS (SELECT 1 FROM pg_catalog.pg_class c WHERE c.oid = $2::oid) AS exact_exists`;

/** Builds `COMMENT ON TABLE … IS <literal>` server-side: the marker is bound, and `format(%L)` quotes it. */
export const FORMAT_COMMENT = `SELECT pg_catalog.format('COMMENT ON TABLE %I.%I IS %L', $1::text, $2::text, $3::text) AS statement`;

export function receiptTableDdl(receipts: TableRef): string {
  return `CREATE TABLE IF NOT EXISTS ${quoteTable(receipts)} (
  invocation_id text PRIMARY KEY,
  target_schema text NOT NULL,
  target_table text NOT NULL,
  mode text NOT NULL,
  window_start timestamptz NOT NULL,
  window_end timestamptz NOT NULL,
  rows bigint NOT NULL,
  digest text NOT NULL,
  staging_object_id text NOT NULL,
  published_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  method text
)`;
}

/**
 * Read from the receipt table aliased `r`. `method` is read through the row's JSON, so a
 * receipt table created before the column existed still reads (method null: set-based).
 */
export const RECEIPT_COLUMNS =
  "invocation_id, target_schema, target_table, mode, window_start, window_end, rows::text AS row_count, digest, staging_object_id, published_at, to_jsonb(r) ->> 'method' AS method";

/** A receipt table created before `method`: the column is added once (checked first, so the lock is taken only then). */
export const RECEIPT_METHOD_MISSING =
  "SELECT NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = $1::regclass AND attname = 'method' AND NOT attisdropped) AS missing";

/**
 * Which of the given columns of a table (by object id) are json or jsonb, through any
 * domains over them: `json_populate_recordset` hands those the JSON text of a value, so
 * the COPY route must too (src/domain/delivery/chunk-copy-text.ts).
 */
export const JSON_COLUMNS = `
WITH RECURSIVE base(name, type) AS (
  SELECT a.attname::text, a.atttypid FROM pg_catalog.pg_attribute a
   WHERE a.attrelid = $1::oid AND a.attnum > 0 AND NOT a.attisdropped AND a.attname = ANY($2::text[])
  UNION ALL
  SELECT b.name, t.typbasetype FROM base b JOIN pg_catalog.pg_type t ON t.oid = b.type WHERE t.typtype = 'd'
)
SELECT name FROM base WHERE type IN ('pg_catalog.json'::pg_catalog.regtype, 'pg_catalog.jsonb'::pg_catalog.regtype)`;

/**
 * The replace of one chunk, in one statement (one round trip): the data-modifying CTE
 * deletes `$1`'s rows as the statement's snapshot holds them (a re-load's earlier rows;
 * never the rows this statement inserts) and the INSERT bulk-loads the chunk: `$2` is the
 * chunk's rows as one JSON array, bound as a binary `json` parameter (its UTF-8 bytes,
 * which `json`'s receive function reads as text), expanded server-side into the stage's
 * own row type, so every value is read by its column's type input function, as a bound
 * parameter of that type would be: ISO-8601 text into timestamp[tz], decimal text into
 * bigint/numeric, objects and arrays as their JSON text into json/jsonb, JSON arrays into
 * SQL arrays, null into NULL. The statement's row count is the INSERT's.
 */
export function loadChunkStatement(staging: TableRef, columns: readonly string[]): string {
  const names = columns.map(quoteColumn).join(', ');
  const table = quoteTable(staging);
  return (
    `WITH replaced AS (DELETE FROM ${table} WHERE ${QUOTED_CHUNK} = $1::integer) ` +
    `INSERT INTO ${table} (${names}, ${QUOTED_CHUNK}) SELECT ${names}, $1::integer FROM pg_catalog.json_populate_recordset(NULL::${table}, $2::json)`
  );
}

/** Equality of key columns between aliases `t` and `s`. */
export function keyJoin(keys: readonly string[]): string {
  return keys.map((k) => `t.${quoteColumn(k)} = s.${quoteColumn(k)}`).join(' AND ');
}

// ---------------------------------------------------------------------------------------
// Publication by partition swap (partition-swap.ts)

/** The target's partition key: strategy (`r` = range), number of key columns, and the first one (name, type oid). */
export const PARTITION_KEY = `
SELECT pt.partstrat AS strategy, pt.partnatts AS key_columns, a.attname AS key_column, a.atttypid::text AS key_type
  FROM pg_catalog.pg_partitioned_table pt
  LEFT JOIN pg_catalog.pg_attribute a ON a.attrelid = pt.partrelid AND a.attnum = pt.partattrs[0]
 WHERE pt.partrelid = $1::oid`;

/** The target's direct partitions with their bounds as the catalog prints them. */
export const PARTITIONS = `
SELECT c.oid::text AS object_id, n.nspname AS schema, c.relname AS name, c.relkind = 'r' AS leaf,
       pg_catalog.pg_get_expr(c.relpartbound, c.oid) AS bound
  FROM pg_catalog.pg_inherits i
  JOIN pg_catalog.pg_class c ON c.oid = i.inhrelid
  JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
 WHERE i.inhparent = $1::oid
 ORDER BY c.relname`;

/**
 * Range bounds ($3 lower, $4 upper; NULL = MINVALUE/MAXVALUE) against the window [$1, $2),
 * compared by the server in timestamptz. `timestamp` bounds are UTC wall time (every
 * transaction of the adapter runs with TimeZone UTC).
 */
export function compareBounds(keyType: 'timestamptz' | 'timestamp'): string {
  const at = (v: string) => (keyType === 'timestamp' ? `${v}::timestamp::timestamptz` : `${v}::timestamptz`);
  return `
SELECT (u.lo IS NOT NULL AND u.hi IS NOT NULL AND ${at('u.lo')} = $1::timestamptz AND ${at('u.hi')} = $2::timestamptz) AS exact,
       (coalesce(${at('u.lo')} < $2::timestamptz, true) AND coalesce(${at('u.hi')} > $1::timestamptz, true)) AS overlaps
  FROM unnest($3::text[], $4::text[]) WITH ORDINALITY AS u(lo, hi, ord)
 ORDER BY u.ord`;
}

/** Columns for the swap: what ATTACH compares (name, type, collation) and what it requires (NOT NULL, no generated or identity). */
export const SWAP_COLUMNS = `
SELECT a.attname AS name, pg_catalog.format_type(a.atttypid, a.atttypmod) AS type, a.attcollation::text AS collation,
       a.attnotnull AS not_null, (a.attgenerated <> '' OR a.attidentity <> '') AS derived
  FROM pg_catalog.pg_attribute a
 WHERE a.attrelid = $1::oid AND a.attnum > 0 AND NOT a.attisdropped
 ORDER BY a.attnum`;

/**
 * The target's constraints the partition must carry (CHECK by name, PRIMARY KEY / UNIQUE /
 * EXCLUDE by definition) and foreign keys from or to it (`f`, which decline the swap).
 */
export const SWAP_CONSTRAINTS = `
SELECT con.conname AS name, con.contype AS kind, pg_catalog.pg_get_constraintdef(con.oid) AS definition
  FROM pg_catalog.pg_constraint con
 WHERE (con.conrelid = $1::oid AND con.contype IN ('c', 'p', 'u', 'x', 'f')) OR (con.confrelid = $1::oid AND con.contype = 'f')
 ORDER BY con.conname`;

/** The target's indexes that back no constraint (built on the stage before the swap), and how its own name prints. */
export const SWAP_INDEXES = `
SELECT pg_catalog.pg_get_indexdef(i.indexrelid) AS definition, pg_catalog.format('%I.%I', $2::text, $3::text) AS printed
  FROM pg_catalog.pg_index i
 WHERE i.indrelid = $1::oid
   AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_constraint con WHERE con.conindid = i.indexrelid AND con.conrelid = $1::oid)
 ORDER BY i.indexrelid`;

/** Any relation (of any kind) under a name: the namespace a partition name must be free in. */
export const RELATION_NAMED = `
SELECT c.oid::text AS object_id
  FROM pg_catalog.pg_class c
  JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
 WHERE n.nspname = $1 AND c.relname = $2`;

/**
 * The exact object, wherever it now is: its name, marker, and the parent it is a
 * partition of (cleanup's proof that a stage became the receipt's partition).
 */
export const OBJECT_AS_PARTITION = `
SELECT n.nspname AS schema, c.relname AS name, pg_catalog.obj_description(c.oid, 'pg_class') AS marker,
       pn.nspname AS parent_schema, p.relname AS parent_name
  FROM pg_catalog.pg_class c
  JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
  LEFT JOIN pg_catalog.pg_inherits i ON i.inhrelid = c.oid AND c.relispartition
  LEFT JOIN pg_catalog.pg_class p ON p.oid = i.inhparent
  LEFT JOIN pg_catalog.pg_namespace pn ON pn.oid = p.relnamespace
 WHERE c.oid = $1::oid`;
