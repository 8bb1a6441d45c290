import { ValidationError } from '../errors.js';
import type { Route } from './manifest-types.js';
import { assertTableRef, assertUserColumn } from './target-rules.js';

/**
 * Begin's read-only check of a route's target, before custody is taken (docs/delivery.md, "The route
 * manifest"): the table the manifest names must be a regular table of a user schema under
 * exactly that name (no case folding: the adapters quote identifiers), it must not be one
 * of the project's own tables (the receipts table), and every column the route names there
 * must exist under exactly its name. Each adapter observes the catalogue
 * (`TargetPort.checkTarget`); the judgement is here, once, for every engine. Each refusal
 * is a Cutpoint.ValidationError (nothing was written) with its own code.
 */

/** A column the route names on the target, and the manifest field that names it. */
export interface NamedColumn {
  name: string;
  namedBy: string;
}

export interface TargetCheckRequest {
  table: { schema: string; table: string };
  columns: readonly NamedColumn[];
}

/** What an adapter saw in its catalogue for the request. */
export interface TargetObservation {
  /** Every object whose schema and name equal the request's ignoring case (the exact one among them, if any). */
  found: ReadonlyArray<{ schema: string; table: string; kind: 'table' | 'view' | 'other'; system?: boolean }>;
  /** The columns of the exact table, in its own spelling (empty when it does not exist). */
  columns: readonly string[];
}

/** What differs per engine: its system schemas, and where the adapter keeps its receipts. */
export interface TargetEngineRules {
  engine: string;
  systemSchemas: readonly string[];
  /** Schemas whose name starts with one of these are the engine's too (PostgreSQL: `pg_`). */
  systemPrefixes?: readonly string[];
  receipts?: { schema: string; table: string };
}

export class TargetTableMissingError extends ValidationError {
  constructor(message: string) {
    super('delivery.target_table_missing', message);
  }
}

export class TargetNotUserTableError extends ValidationError {
  constructor(message: string) {
    super('delivery.target_not_user_table', message);
  }
}

export class TargetColumnMissingError extends ValidationError {
  constructor(message: string) {
    super('delivery.target_column_missing', message);
  }
}

/** Every target column a route names: its key and time columns, and the columns its quality rules read. */
export function targetCheckOf(route: Route): TargetCheckRequest {
  const { target, quality } = route;
  const columns: NamedColumn[] = [
    ...target.keyColumns.map((name) => ({ name, namedBy: 'target.key_columns' })),
    { name: target.timeColumn, namedBy: 'target.time_column' },
    ...quality.notNull.map((name) => ({ name, namedBy: 'quality.not_null' })),
  ];
  return { table: { schema: target.table.schema, table: target.table.name }, columns };
}

/** The request's names, checked before any query is built from them. */
export function assertTargetCheck(request: TargetCheckRequest): TargetCheckRequest {
  assertTableRef(request.table, 'target');
  for (const c of request.columns) assertUserColumn(c.name);
  return request;
}

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/** Refusals that need no catalogue: a system schema, the receipts table. */
function refuseReservedTarget(request: TargetCheckRequest, rules: TargetEngineRules): void {
  const { schema, table } = request.table;
  const name = `${schema}.${table}`;
  const system =
    rules.systemSchemas.some((s) => same(s, schema)) ||
    (rules.systemPrefixes ?? []).some((p) => schema.toLowerCase().startsWith(p));
  if (system)
    throw new TargetNotUserTableError(
      `target ${name} is in ${rules.engine}'s system schema ${schema}: deliver into a table of a user schema`,
    );
  const receipts = rules.receipts;
  if (receipts && same(receipts.schema, schema) && same(receipts.table, table)) {
    throw new TargetNotUserTableError(
      `target ${name} is the receipts table cutpoint keeps its publication receipts in: deliver into a table of your own`,
    );
  }
}

/** The judgement of what the adapter observed: a system schema or the receipts table first, then the table, its kind, its columns. */
export function judgeTarget(request: TargetCheckRequest, observed: TargetObservation, rules: TargetEngineRules): void {
  refuseReservedTarget(request, rules);
  const { schema, table } = request.table;
  const name = `${schema}.${table}`;
  const exact = observed.found.find((f) => f.schema === schema && f.table === table);
  if (!exact) {
    const other = observed.found[0];
    const hint = other
      ? `; ${other.schema}.${other.table} exists, which differs only in case (names are exact: write it as it is spelled)`
      : '; create it first, or correct target.table';
    throw new TargetTableMissingError(`target table ${name} does not exist in the ${rules.engine} target${hint}`);
  }
  if (exact.system)
    throw new TargetNotUserTableError(
      `target ${name} is a system object of ${rules.engine}: deliver into a table of a user schema`,
    );
  if (exact.kind !== 'table')
    throw new TargetNotUserTableError(
      `target ${name} is ${exact.kind === 'view' ? 'a view' : 'not a regular table'}: deliver into a regular table`,
    );
  for (const column of request.columns) {
    if (observed.columns.includes(column.name)) continue;
    const other = observed.columns.find((c) => same(c, column.name));
    const hint = other === undefined ? '' : ` (${other} exists, which differs only in case)`;
    throw new TargetColumnMissingError(
      `column ${column.name} named by ${column.namedBy} is not a column of target table ${name}${hint}`,
    );
  }
}
