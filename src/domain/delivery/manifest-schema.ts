import * as z from 'zod';
import {
  BINDING_KINDS,
  MAX_CHUNK_ROWS,
  MAX_CONCURRENCY,
  MAX_KEEPER_RETRY_ATTEMPTS,
  MAX_KEEPER_RETRY_ELAPSED_MS,
  MAX_OBSERVE_DEADLINE_S,
  MAX_PART_ROWS,
  MAX_REPLAY_WINDOW_DAYS,
  MANIFEST_VERSION,
  TARGET_MODES,
} from './manifest-types.js';
import { isOwnedStagingName, STAGING_PREFIX } from './identifiers.js';
import { MAX_ROLLING_DAYS, parseUtcTimestamp, ROLLING_BOUNDARIES } from './window.js';

/**
 * The route manifest's shape, once (docs/delivery.md "The route manifest"): the parser validates
 * every document through `ManifestSchema`, and `npm run schemas` writes the same schema as
 * schemas/manifest.schema.json for editors (`# yaml-language-server: $schema=…`).
 * Messages name what a value must be, never the value. What one node cannot say alone
 * (binding references and kinds, the route kind's quality rules, part sizing) is checked
 * after the shape, in manifest-routes.ts, manifest-bindings.ts and manifest-quality.ts.
 */

export const MAX_SQL_CHARS = 65_536;
export const MAX_KEY_COLUMNS = 32;
export const MAX_NOT_NULL = 256;
export const MAX_ASSERTIONS = 64;
export const ENV_NAME = /^[A-Z_][A-Z0-9_]{0,127}$/;
/** An *_env value that is evidently a value, not a name: a URL, user@host, k=v;… */
const LOOKS_LIKE_VALUE = /[:/@=;]/;
const SECRET_ARN = /^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:[A-Za-z0-9/_+=.@-]{1,512}$/;
const MANIFEST_NAME = /^[a-z][a-z0-9_-]{0,63}$/;
const SQL_IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;
const QUALIFIED = /^[A-Za-z_][A-Za-z0-9_]{0,62}\.[A-Za-z_][A-Za-z0-9_]{0,62}$/;
const ASSERTION_NAME = /^[a-z][a-z0-9_]{0,62}$/;
const UTC_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?Z$/;
/** One SELECT or WITH statement, no `;` (spelled case-insensitively: JSON Schema patterns carry no flags). */
const SELECT = /^\s*([Ss][Ee][Ll][Ee][Cc][Tt]|[Ww][Ii][Tt][Hh])\b[^;]*$/;

/** A mapping with exactly these keys: any other is refused by name (a typo never turns a rule off). */
function closed<S extends z.ZodRawShape>(shape: S) {
  const keys = Object.keys(shape).join(', ');
  return z.strictObject(shape, {
    error: (issue) =>
      issue.code === 'unrecognized_keys' ? `unknown key (expected one of ${keys})` : 'must be a mapping',
  });
}

/** A mapping of user-chosen names (routes, bindings) to entries. */
function named<T extends z.ZodType>(what: string, entry: T) {
  const key = z.string().regex(MANIFEST_NAME, `${what} names must match [a-z][a-z0-9_-]{0,63}`);
  return z.record(key, entry, { error: `must be a mapping of ${what} names` });
}

const integer = (min: number, max: number) => {
  const message = `must be an integer in [${min}, ${max}]`;
  return z.int({ error: message }).min(min, message).max(max, message);
};
const boolean = () => z.boolean({ error: 'must be true or false' });
const oneOf = <T extends readonly [string, ...string[]]>(options: T) =>
  z.enum(options, { error: `must be one of ${options.join(', ')}` });

const IDENTIFIER_MESSAGE = 'must be an SQL identifier ([A-Za-z_][A-Za-z0-9_]*, at most 63 characters)';
const identifier = () => z.string({ error: IDENTIFIER_MESSAGE }).regex(SQL_IDENTIFIER, IDENTIFIER_MESSAGE);
const qualified = (form: string) => {
  const message = `must be ${form}, each part an SQL identifier`;
  return z.string({ error: message }).regex(QUALIFIED, message);
};

/**
 * A list of distinct identifiers. Duplicates compare case-insensitively: SQL Server's
 * default collations do, so `[id, ID]` names one column twice. A duplicate's issue carries
 * `params.duplicates`, the first one's index, which the message renders as a path.
 */
function identifierList(min: number, max: number) {
  const count = min > 0 ? `must list between ${min} and ${max} columns` : `must list at most ${max} columns`;
  return z
    .array(identifier(), { error: 'must be a list of SQL identifiers' })
    .min(min, count)
    .max(max, count)
    .superRefine((list, ctx) => duplicates(list, (item) => item.toLowerCase(), [], ctx));
}

function duplicates<T>(list: readonly T[], keyOf: (item: T) => unknown, at: string[], ctx: z.RefinementCtx): void {
  const seen = new Map<unknown, number>();
  list.forEach((item, i) => {
    const key = keyOf(item);
    if (key === undefined) return;
    const first = seen.get(key);
    if (first === undefined) seen.set(key, i);
    else
      ctx.addIssue({ code: 'custom', path: [i, ...at], message: 'duplicates', params: { duplicates: [first, ...at] } });
  });
}

/** One SELECT (or WITH … SELECT) statement; `;` is refused so no second statement rides along. */
const select = () =>
  z
    .string({ error: 'must be a non-empty string' })
    .refine((s) => s.trim() !== '', { message: 'must be a non-empty string', abort: true })
    .max(MAX_SQL_CHARS, { message: `must be at most ${MAX_SQL_CHARS} characters`, abort: true })
    .refine((s) => /^(select|with)\b/i.test(s.trim()), {
      message: 'must be a single SELECT (or WITH … SELECT) statement',
      abort: true,
    })
    .refine((s) => !s.includes(';'), "must be a single statement without ';'")
    .meta({ pattern: SELECT.source });

const ENV_MESSAGE = 'must be an environment variable name ([A-Z_][A-Z0-9_]*)';
/** Refused as a literal credential (its own code) when the value is evidently not a name. */
const envName = () =>
  z
    .string({ error: ENV_MESSAGE })
    .refine((v) => ENV_NAME.test(v) || !LOOKS_LIKE_VALUE.test(v), {
      message: 'must name an environment variable, not hold its value',
      params: { code: 'delivery.binding_literal_credential' },
      abort: true,
    })
    .regex(ENV_NAME, ENV_MESSAGE);

export const BINDING_KEYS = ['kind', 'url_env', 'username_env', 'password_env', 'secret_arn'] as const;

export const BindingSchema = closed({
  kind: oneOf(BINDING_KINDS),
  url_env: envName().optional(),
  username_env: envName().optional(),
  password_env: envName().optional(),
  secret_arn: z
    .string({ error: 'must be a Secrets Manager secret ARN (arn:aws:secretsmanager:<region>:<account>:secret:<name>)' })
    .regex(SECRET_ARN, 'must be a Secrets Manager secret ARN (arn:aws:secretsmanager:<region>:<account>:secret:<name>)')
    .optional(),
}).meta({ anyOf: [{ required: ['url_env'] }, { required: ['secret_arn'] }] });

const bindingRef = () => z.string({ error: 'must name a binding' }).regex(MANIFEST_NAME, 'must name a binding');

export const SourceSchema = closed({
  binding: bindingRef(),
  table: qualified('database.table').optional(),
  query: select().optional(),
  time_column: identifier(),
  key_columns: identifierList(1, MAX_KEY_COLUMNS),
}).meta({ oneOf: [{ required: ['table'] }, { required: ['query'] }] });

export const TargetSchema = closed({
  binding: bindingRef(),
  // Retirement drops owned stages by their derived names; an authored table in that namespace could be mistaken for one.
  table: qualified('schema.table (database.table on a clickhouse target)').refine(
    (t) => !isOwnedStagingName(t.split('.')[1] ?? ''),
    `table names beginning ${STAGING_PREFIX} are reserved for owned staging`,
  ),
  key_columns: identifierList(1, MAX_KEY_COLUMNS),
  time_column: identifier().optional(),
  mode: oneOf(TARGET_MODES),
});

const timestamp = () => {
  const message = 'must be an exact UTC timestamp such as 2026-11-01T00:00:00Z (seconds and Z required)';
  return z
    .string({ error: message })
    .regex(UTC_TIMESTAMP, { message, abort: true })
    .refine((v) => parseUtcTimestamp(v) !== undefined, message);
};

export const WindowSchema = z.discriminatedUnion(
  'kind',
  [
    closed({ kind: z.literal('fixed'), start: timestamp(), end: timestamp() }).refine(
      (w) => {
        const [start, end] = [parseUtcTimestamp(w.start), parseUtcTimestamp(w.end)];
        return start === undefined || end === undefined || start < end; // a bound that is no timestamp is refused at it
      },
      { path: ['end'], message: 'must be after start (the window is half-open [start, end))' },
    ),
    closed({ kind: z.literal('rolling'), days: integer(1, MAX_ROLLING_DAYS), boundary: oneOf(ROLLING_BOUNDARIES) }),
  ],
  // Typed as the union's own issue, the error map also gets the not-an-object one.
  {
    error: (issue) =>
      (issue.code as string) === 'invalid_type' ? 'must be a mapping' : 'must be one of fixed, rolling',
  },
);

export const AssertionSchema = closed({
  name: z.string({ error: 'must match [a-z][a-z0-9_]{0,62}' }).regex(ASSERTION_NAME, 'must match [a-z][a-z0-9_]{0,62}'),
  sql: select(),
  expect: z.int({ error: 'must be an integer' }),
});

const RetrySchema = closed({
  max_attempts: integer(1, MAX_KEEPER_RETRY_ATTEMPTS),
  max_elapsed_ms: integer(1, MAX_KEEPER_RETRY_ELAPSED_MS),
});

/**
 * Every rule of either route kind; which apply is the route's (manifest-quality.ts): an
 * SQL route refuses the v2 settings (capsule, target_observation, replay_window_days).
 */
export const QualitySchema = closed({
  capsule: z.literal('v2', { error: 'must be v2 (the only quality capsule version a route can declare)' }).optional(),
  target_observation: closed({
    deadline_s: integer(1, MAX_OBSERVE_DEADLINE_S).optional(),
    keeper_no_node_retry: RetrySchema.optional(),
  }).optional(),
  replay_window_days: integer(1, MAX_REPLAY_WINDOW_DAYS).optional(),
  row_count_matches_receipts: boolean().optional(),
  unique_keys: boolean().optional(),
  not_null: identifierList(0, MAX_NOT_NULL).optional(),
  assertions: z
    .array(AssertionSchema, { error: 'must be a list' })
    .max(MAX_ASSERTIONS, `must list at most ${MAX_ASSERTIONS} assertions`)
    .superRefine((list, ctx) => duplicates(list, (a) => a.name, ['name'], ctx))
    .optional(),
});

export const RouteSchema = closed({
  source: SourceSchema,
  window: WindowSchema,
  target: TargetSchema,
  quality: QualitySchema.optional(),
  chunk_rows: integer(1, MAX_CHUNK_ROWS).optional(),
  part_rows: integer(1, MAX_PART_ROWS).optional(),
  max_concurrency: integer(1, MAX_CONCURRENCY).optional(),
});

export const ManifestSchema = closed({
  version: z.literal(MANIFEST_VERSION, { error: `must be ${MANIFEST_VERSION}` }),
  bindings: named('binding', BindingSchema),
  routes: named('route', RouteSchema).meta({ minProperties: 1 }),
}).meta({ title: 'cutpoint route manifest', description: 'docs/delivery.md "The route manifest"' });

export type ManifestDocument = z.infer<typeof ManifestSchema>;
export type RouteDocument = z.infer<typeof RouteSchema>;
export type QualityDocument = z.infer<typeof QualitySchema>;
export type WindowDocument = z.infer<typeof WindowSchema>;
