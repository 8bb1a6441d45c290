import { ValidationError } from '../../domain/errors.js';
import { bracket } from './sql-text.js';

/**
 * Bulk type mapping: how each stage column is read out of a chunk by
 * `OPENJSON(@json) WITH (...)` (SQL Server 2016+, database compatibility level 130 or
 * higher). Pure; no I/O.
 *
 * A chunk's values follow the source contract (src/ports/source.ts): times are ISO-8601
 * UTC text with `Z` (`2026-11-01T10:00:00.123Z`), dates `YYYY-MM-DD`, 64-bit integers and
 * decimals are decimal text, smaller integers and floats JSON numbers, Bool true/false,
 * arrays and objects nested JSON, NULL null. The rule: every value reaches the stage column
 * through SQL Server's own conversion to the column's declared type, or the column is
 * refused (`delivery.unsupported_column_type`) before anything is written. Never a silent
 * reinterpretation:
 * - integers (tinyint..bigint), bit, float, real, money, smallmoney, date, time(n),
 *   uniqueidentifier, decimal/numeric(p,s): the WITH column has the stage's own type and a
 *   `strict` path (a missing key is an error, not NULL). Text like `"18446744073709551615"`
 *   into bigint, `"1.5"` into int, `"nan"` into float, `"x"` into bit are conversion errors
 *   (definite: the load rolls back). `true`/`false` → bit 1/0. Decimal text keeps every
 *   digit the column's scale holds; digits past the scale round, as any INSERT into
 *   decimal(p,s) does (the column's declared precision, not a reinterpretation).
 * - datetime2(n), datetime, smalldatetime: read as datetimeoffset (which accepts the `Z`
 *   and any `±hh:mm` offset) and converted to UTC with SWITCHOFFSET before the cast, so
 *   `2026-11-01T10:00:00.123Z` is 10:00:00.123 and `…T12:00:00+02:00` is 10:00 too (a plain
 *   cast to datetime2 would keep 12:00 and drop the offset). Fractions round to the
 *   column's own resolution.
 * - datetimeoffset(n): read as datetimeoffset(n): `Z` is +00:00, an offset is kept.
 * - nvarchar/nchar (any length), and varchar/char with a UTF-8 collation (`*_UTF8`, where
 *   nvarchar → varchar is lossless): read twice as nvarchar(max), once as a scalar and
 *   once `AS JSON` (both `lax`: each is NULL where the other applies), and COALESCEd: a
 *   string lands as itself, a number or boolean as its JSON spelling, an array or object
 *   as its JSON text. The INSERT converts to the column's length, so an over-long value
 *   is SQL Server's truncation error, never a cut string.
 * - refused: varchar/char/text under a non-UTF-8 collation (code page loss would turn
 *   characters into `?`), binary/varbinary/image (a chunk carries no bytes: text would be
 *   stored as its UTF-16 bytes), xml, json, sql_variant, ntext, rowversion, hierarchyid,
 *   geometry, geography and anything else not listed.
 */

/** A stage column as sys.columns describes it (`type_name` is the system type: aliases resolved). */
export interface StageColumn {
  name: string;
  type_name: string;
  /** Bytes; -1 for (max). */
  max_length: number;
  precision: number;
  scale: number;
  collation_name: string | null;
}

export interface OpenJsonColumn {
  /** The column's entries in the WITH clause (two for text: the scalar and the AS JSON reading). */
  with: string[];
  /** The value inserted into the stage column, read from the OPENJSON alias `j`. */
  select: string;
}

const SAME_TYPE = new Set([
  'int',
  'bigint',
  'smallint',
  'tinyint',
  'bit',
  'float',
  'real',
  'money',
  'smallmoney',
  'date',
  'uniqueidentifier',
]);
const TEXT_TYPES = new Set(['nvarchar', 'nchar', 'varchar', 'char']);
const UTC_TYPES = new Set(['datetime2', 'datetime', 'smalldatetime']);

/**
 * The JSON path of a top-level key as a T-SQL literal: the key JSON-quoted (`"` `\` and
 * control characters escaped), inside N'…' with `'` doubled. Keys are validated
 * identifiers already; the quoting holds for any string.
 */
export function jsonPath(key: string, mode: 'strict' | 'lax'): string {
  return `N'${`${mode} $.${JSON.stringify(key)}`.replace(/'/g, "''")}'`;
}

/** How the column at `index` of the chunk is declared in the WITH clause and selected. */
export function openJsonColumnOf(col: StageColumn, index: number): OpenJsonColumn {
  const alias = `c${index}`;
  const ref = `j.${bracket(alias)}`;
  const typed = (withType: string, select = ref): OpenJsonColumn => ({
    with: [`${bracket(alias)} ${withType} ${jsonPath(col.name, 'strict')}`],
    select,
  });
  const type = col.type_name.toLowerCase();
  if (SAME_TYPE.has(type)) return typed(type);
  if (type === 'decimal' || type === 'numeric') return typed(`decimal(${col.precision},${col.scale})`);
  if (type === 'time') return typed(`time(${col.scale})`);
  if (type === 'datetimeoffset') return typed(`datetimeoffset(${col.scale})`);
  if (UTC_TYPES.has(type)) {
    const target = type === 'datetime2' ? `datetime2(${col.scale})` : type;
    const scale = type === 'datetime2' ? col.scale : 3;
    return typed(`datetimeoffset(${scale})`, `CAST(SWITCHOFFSET(${ref}, N'+00:00') AS ${target})`);
  }
  if (TEXT_TYPES.has(type)) {
    if ((type === 'varchar' || type === 'char') && !isUtf8Collation(col.collation_name)) {
      throw unsupported(
        col,
        `${type} under collation ${String(col.collation_name)} would lose characters outside its code page; use nvarchar or a *_UTF8 collation`,
      );
    }
    const json = bracket(`${alias}_json`);
    return {
      with: [
        `${bracket(alias)} nvarchar(max) ${jsonPath(col.name, 'lax')}`,
        `${json} nvarchar(max) ${jsonPath(col.name, 'lax')} AS JSON`,
      ],
      select: `COALESCE(${ref}, j.${json})`,
    };
  }
  throw unsupported(col, `type ${col.type_name} cannot be loaded from a JSON chunk`);
}

function isUtf8Collation(name: string | null): boolean {
  return typeof name === 'string' && /_UTF8$/i.test(name);
}

function unsupported(col: StageColumn, why: string): ValidationError {
  return new ValidationError('delivery.unsupported_column_type', `column ${col.name}: ${why}`);
}

/** The engine's spelling of a column type, for `describeTable`; refuses what a load would refuse. */
export function typeSpelling(col: StageColumn): string {
  openJsonColumnOf(col, 0);
  const type = col.type_name.toLowerCase();
  if (TEXT_TYPES.has(type)) {
    const bytesPerChar = type.startsWith('n') ? 2 : 1;
    return `${type}(${col.max_length === -1 ? 'max' : col.max_length / bytesPerChar})`;
  }
  if (type === 'decimal' || type === 'numeric') return `${type}(${col.precision},${col.scale})`;
  if (type === 'datetime2' || type === 'datetimeoffset' || type === 'time') return `${type}(${col.scale})`;
  return type;
}
