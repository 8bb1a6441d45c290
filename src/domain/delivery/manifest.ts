import { parseDocument } from 'yaml';
import { ValidationError } from '../errors.js';
import {
  isManifestName,
  isOwnedStagingName,
  isSqlIdentifier,
  parseQualifiedName,
  STAGING_PREFIX,
  type QualifiedName,
} from './identifiers.js';
import { MAX_ROLLING_DAYS, parseUtcTimestamp, ROLLING_BOUNDARIES, type RollingBoundary, type WindowPolicy } from './window.js';

/**
 * Route manifests (issue 4): a YAML file of named routes, addressed as `route.yaml#daily`.
 * This module parses and validates the text; reading the file is the caller's job.
 *
 * ```yaml
 * version: 1
 * bindings:                       # connections, named by reference only — never values
 *   events_ch:
 *     kind: clickhouse            # clickhouse | mssql | postgres
 *     url_env: CH_URL             # environment variables that hold the values locally
 *     username_env: CH_USER       # (optional)
 *     password_env: CH_PASSWORD   # (optional)
 *     secret_arn: arn:aws:secretsmanager:eu-west-1:123456789012:secret:events-ch   # on AWS
 *   warehouse:
 *     kind: mssql
 *     url_env: MSSQL_URL
 *     secret_arn: arn:aws:secretsmanager:eu-west-1:123456789012:secret:warehouse
 * routes:
 *   daily:                        # route names: [a-z][a-z0-9_-]{0,63}
 *     source:
 *       binding: events_ch        # must be a clickhouse binding
 *       table: analytics.events   # database.table — or query: "SELECT …"; exactly one
 *       time_column: event_time   # UTC; the window bounds it, half-open
 *       key_columns: [event_id]
 *     window:                     # fixed, or rolling N days ending at the last boundary <= now
 *       kind: fixed
 *       start: 2026-11-01T00:00:00Z
 *       end: 2026-11-02T00:00:00Z
 *       # kind: rolling
 *       # days: 7
 *       # boundary: day           # day | hour
 *     target:
 *       binding: warehouse        # must be an mssql or postgres binding
 *       table: dbo.events_daily   # schema.table; cutpoint_stg_* is reserved for owned stages
 *       key_columns: [event_id]
 *       time_column: event_time   # optional; defaults to source.time_column
 *       mode: replace_window      # replace_window | merge (merge upserts on key_columns)
 *     quality:                    # optional
 *       row_count_matches_receipts: true    # default true
 *       unique_keys: true                   # default: true for merge, false otherwise
 *       not_null: [event_id, event_time]    # default []
 *       assertions:                         # default []
 *         - name: no_future_events
 *           sql: "SELECT COUNT(*) FROM {staging} WHERE event_time > now()"
 *           expect: 0
 *     chunk_rows: 50000           # optional; 1..1000000, default 50000
 *     part_rows: 2000000          # optional; rows per part (sub-window), 1..100000000, default 2000000
 *                                 # (or chunk_rows x 100000 when that is less)
 *     max_concurrency: 4          # optional; parts extracted and loaded at once, 1..100, default 4
 * ```
 *
 * Parts: begin's plan step cuts the window into parts of about `part_rows` rows (time
 * ranges sized by one count query); each part is extracted and loaded by its own Lambda,
 * `max_concurrency` at a time (size it to what the target ingests in parallel). A part
 * holds at most 100,000 chunks, so `part_rows / chunk_rows` must not exceed that.
 *
 * Rules that are not just shapes:
 * - Unknown keys are refused at every level: a typo (`not_nul`) must not silently turn a
 *   quality rule off.
 * - A binding never carries a literal credential. Only environment variable names
 *   (`*_env`) and a Secrets Manager ARN are accepted; a key such as `password` or `url`,
 *   or an `*_env` value that looks like a connection string, is refused with
 *   `delivery.binding_literal_credential`.
 * - Error messages name paths, never values, so a secret pasted into the wrong field is
 *   not copied to stderr or a log.
 * - SQL names are conservative identifiers (see identifiers.ts); `schema.table` is two of
 *   them. A qualified source table is required: the connection's default database must
 *   not decide what a sealed run read.
 * - SQL text (a source query, an assertion) is one SELECT or WITH statement without `;`.
 *   The extractor wraps a source query as a subquery bounded on time_column; an
 *   assertion names the owned stage only through the `{staging}` placeholder and must
 *   return one number equal to `expect`.
 */

export const MANIFEST_VERSION = 1;
export const DEFAULT_CHUNK_ROWS = 50_000;
export const MAX_CHUNK_ROWS = 1_000_000;
export const DEFAULT_PART_ROWS = 2_000_000;
export const MAX_PART_ROWS = 100_000_000;
export const DEFAULT_MAX_CONCURRENCY = 4;
export const MAX_CONCURRENCY = 100;
/** parts.ts MAX_CHUNKS_PER_PART (kept here so the manifest stays free of the parts module). */
const MAX_CHUNKS_PER_PART = 100_000;
const MAX_KEY_COLUMNS = 32;
const MAX_NOT_NULL = 256;
const MAX_ASSERTIONS = 64;
const MAX_SQL_CHARS = 65_536;
const MAX_ISSUES = 50;

export const BINDING_KINDS = ['clickhouse', 'mssql', 'postgres'] as const;
export type BindingKind = (typeof BINDING_KINDS)[number];
const SOURCE_KINDS: readonly BindingKind[] = ['clickhouse'];
const TARGET_KINDS: readonly BindingKind[] = ['mssql', 'postgres'];

export const TARGET_MODES = ['replace_window', 'merge'] as const;
export type TargetMode = (typeof TARGET_MODES)[number];

/** A binding names where credentials live; it never holds them. */
export interface Binding {
  name: string;
  kind: BindingKind;
  urlEnv?: string;
  usernameEnv?: string;
  passwordEnv?: string;
  secretArn?: string;
}

export type SourceRelation = { kind: 'table'; table: QualifiedName } | { kind: 'query'; sql: string };

export interface SourceSpec {
  binding: string;
  from: SourceRelation;
  timeColumn: string;
  keyColumns: string[];
}

export interface TargetSpec {
  binding: string;
  table: QualifiedName;
  keyColumns: string[];
  /** The target column replace_window deletes by; defaults to the source time column. */
  timeColumn: string;
  mode: TargetMode;
}

export interface QualityAssertion {
  name: string;
  /** One SELECT returning one number; `{staging}` is replaced by the quoted owned stage. */
  sql: string;
  expect: number;
}

export interface QualityRules {
  rowCountMatchesReceipts: boolean;
  uniqueKeys: boolean;
  notNull: string[];
  assertions: QualityAssertion[];
}

export interface Route {
  name: string;
  source: SourceSpec;
  window: WindowPolicy;
  target: TargetSpec;
  quality: QualityRules;
  chunkRows: number;
  /** Rows per part (sub-window) the plan aims at. */
  partRows: number;
  /** Parts extracted and loaded at once (the Distributed Map's MaxConcurrency). */
  maxConcurrency: number;
}

export interface Manifest {
  version: typeof MANIFEST_VERSION;
  /** Where the text came from, for messages (e.g. the file path). */
  sourceName: string;
  /** Own properties only; look up with `Object.hasOwn` (selectRoute does). */
  bindings: Readonly<Record<string, Binding>>;
  routes: Readonly<Record<string, Route>>;
}

/** A route with its two bindings resolved: everything a run or a recovery needs. */
export interface SelectedRoute {
  name: string;
  route: Route;
  sourceBinding: Binding;
  targetBinding: Binding;
}

export interface Selector {
  file: string;
  route: string;
}

export type ManifestIssueCode =
  | 'delivery.manifest_unparsable'
  | 'delivery.manifest_invalid'
  | 'delivery.binding_unknown'
  | 'delivery.binding_literal_credential';

export interface ManifestIssue {
  /** e.g. `routes.daily.target.key_columns[1]`; empty for a YAML syntax error. */
  path: string;
  code: ManifestIssueCode;
  message: string;
}

/**
 * Every problem found, in document order. `code` is the first issue's code; the message
 * lists them all as `path: message`.
 */
export class ManifestError extends ValidationError {
  constructor(
    readonly sourceName: string,
    readonly issues: readonly ManifestIssue[],
  ) {
    const first = issues[0];
    super(first?.code ?? 'delivery.manifest_invalid', issues.map(issueText).join('; '));
  }
}

function issueText(issue: ManifestIssue): string {
  return issue.path ? `${issue.path}: ${issue.message}` : issue.message;
}

// ---------------------------------------------------------------------------------------
// Selector

/**
 * `route.yaml#daily` → `{ file: 'route.yaml', route: 'daily' }`. The last `#` separates,
 * so a file path may contain `#`; the route name may not.
 */
export function parseSelector(text: string): Selector {
  const at = typeof text === 'string' ? text.lastIndexOf('#') : -1;
  const file = at > 0 ? text.slice(0, at) : '';
  const route = at > 0 ? text.slice(at + 1) : '';
  if (!file || !isManifestName(route)) {
    throw new ValidationError('delivery.selector_invalid', 'manifest selector must be <file>#<route>, route [a-z][a-z0-9_-]{0,63}');
  }
  return { file, route };
}

export function selectorText(selector: Selector): string {
  return `${selector.file}#${selector.route}`;
}

/** The route a selector names, with its bindings; `delivery.selector_unknown` if absent. */
export function selectRoute(manifest: Manifest, selector: Pick<Selector, 'route'> | string): SelectedRoute {
  const name = typeof selector === 'string' ? (selector.includes('#') ? parseSelector(selector).route : selector) : selector.route;
  const route = Object.hasOwn(manifest.routes, name) ? manifest.routes[name] : undefined;
  if (!route) {
    const known = Object.keys(manifest.routes).sort().join(', ');
    throw new ValidationError(
      'delivery.selector_unknown',
      `${manifest.sourceName} has no route ${isManifestName(name) ? name : '(invalid name)'}; routes: ${known || '(none)'}`,
    );
  }
  const sourceBinding = Object.hasOwn(manifest.bindings, route.source.binding) ? manifest.bindings[route.source.binding] : undefined;
  const targetBinding = Object.hasOwn(manifest.bindings, route.target.binding) ? manifest.bindings[route.target.binding] : undefined;
  // parseManifest guarantees both; a hand-built Manifest may not.
  if (!sourceBinding || !targetBinding) {
    throw new ValidationError('delivery.binding_unknown', `routes.${name}: ${!sourceBinding ? 'source' : 'target'} binding is not declared`);
  }
  return { name, route, sourceBinding, targetBinding };
}

// ---------------------------------------------------------------------------------------
// Parsing

/** YAML error codes we explain; others print their code. The library's own messages can
 * quote source text (a scalar with a bad escape), so they are never printed. */
const YAML_HINTS: Record<string, string> = {
  DUPLICATE_KEY: 'duplicate key',
  BAD_INDENT: 'bad indentation',
  TAB_AS_INDENT: 'tabs are not allowed as indentation',
  MISSING_CHAR: 'unterminated quote or bracket',
  MULTIPLE_DOCS: 'one YAML document expected',
  BLOCK_AS_IMPLICIT_KEY: 'nested mapping in a compact mapping',
  TAG_RESOLVE_FAILED: 'unknown tag',
  ALIAS_PROPS: 'alias with properties',
  BAD_ALIAS: 'bad alias',
  UNEXPECTED_TOKEN: 'unexpected token',
  BAD_DQ_ESCAPE: 'invalid escape in a double-quoted string',
};

function lineCol(text: string, offset: number): string {
  let line = 1;
  let lastBreak = -1;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lastBreak = i;
    }
  }
  return `${line}:${offset - lastBreak}`;
}

export function parseManifest(text: string, sourceName: string): Manifest {
  const unparsable = (message: string): ManifestError =>
    new ManifestError(sourceName, [{ path: '', code: 'delivery.manifest_unparsable', message }]);
  if (typeof text !== 'string') throw unparsable(`${sourceName}: manifest text must be a string`);
  // Core schema (YAML 1.2): timestamps stay strings, `yes`/`no` stay strings, no `<<`
  // merge keys. prettyErrors off: pretty messages quote the offending source line.
  const doc = parseDocument(text, { prettyErrors: false, uniqueKeys: true, strict: true, schema: 'core' });
  const problem = doc.errors[0] ?? doc.warnings[0];
  if (problem) {
    const where = `${sourceName}:${lineCol(text, problem.pos[0])}`;
    throw unparsable(`${where}: YAML ${problem.code}${YAML_HINTS[problem.code] ? ` (${YAML_HINTS[problem.code]})` : ''}`);
  }
  let data: unknown;
  try {
    // Maps as Map: no prototype keys (`__proto__`), and non-string keys stay detectable.
    data = doc.toJS({ mapAsMap: true, maxAliasCount: 100 });
  } catch {
    // Unresolved aliases or alias expansion beyond the limit.
    throw unparsable(`${sourceName}: YAML aliases could not be resolved within limits`);
  }
  const check = new Checker();
  const manifest = validateManifest(data, sourceName, check);
  if (check.issues.length > 0 || !manifest) throw new ManifestError(sourceName, check.issues);
  return manifest;
}

type Segment = string | number;

const PLAIN_SEGMENT = /^[A-Za-z0-9_-]+$/;

function renderPath(path: readonly Segment[]): string {
  if (path.length === 0) return '(document)';
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else if (PLAIN_SEGMENT.test(seg)) out += out ? `.${seg}` : seg;
    else out += `[${JSON.stringify(seg.length > 64 ? `${seg.slice(0, 64)}…` : seg)}]`;
  }
  return out;
}

class Checker {
  readonly issues: ManifestIssue[] = [];

  add(path: readonly Segment[], message: string, code: ManifestIssueCode = 'delivery.manifest_invalid'): undefined {
    if (this.issues.length < MAX_ISSUES) this.issues.push({ path: renderPath(path), code, message });
    return undefined;
  }

  /** A mapping with string keys, every key allowed, every required key present. */
  map(
    value: unknown,
    path: Segment[],
    allowed: readonly string[],
    required: readonly string[],
    alreadyReported: ReadonlySet<string> = new Set(),
  ): Map<string, unknown> | undefined {
    if (!(value instanceof Map)) return this.add(path, 'must be a mapping');
    for (const key of value.keys()) {
      if (typeof key !== 'string') this.add(path, 'keys must be plain strings');
      else if (!allowed.includes(key) && !alreadyReported.has(key)) {
        this.add([...path, key], `unknown key (expected one of ${allowed.join(', ')})`);
      }
    }
    for (const key of required) if (!value.has(key)) this.add([...path, key], 'is required');
    // Returned even with unknown keys, so the known ones are still checked and reported.
    return value as Map<string, unknown>;
  }

  /** A mapping of user-chosen names (routes, bindings) to entries. */
  namedEntries(value: unknown, path: Segment[], what: string): Array<[string, unknown]> {
    if (!(value instanceof Map)) return this.add(path, `must be a mapping of ${what} names`) ?? [];
    const out: Array<[string, unknown]> = [];
    for (const [key, entry] of value) {
      if (typeof key !== 'string' || !isManifestName(key)) {
        this.add(typeof key === 'string' ? [...path, key] : path, `${what} names must match [a-z][a-z0-9_-]{0,63}`);
      } else {
        out.push([key, entry]);
      }
    }
    return out;
  }

  string(value: unknown, path: Segment[]): string | undefined {
    if (typeof value !== 'string' || value.trim() === '') return this.add(path, 'must be a non-empty string');
    return value;
  }

  boolean(value: unknown, path: Segment[]): boolean | undefined {
    if (typeof value !== 'boolean') return this.add(path, 'must be true or false');
    return value;
  }

  integer(value: unknown, path: Segment[], min: number, max: number): number | undefined {
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
      return this.add(path, `must be an integer in [${min}, ${max}]`);
    }
    return value;
  }

  oneOf<T extends string>(value: unknown, path: Segment[], options: readonly T[]): T | undefined {
    if (typeof value !== 'string' || !(options as readonly string[]).includes(value)) {
      return this.add(path, `must be one of ${options.join(', ')}`);
    }
    return value as T;
  }

  identifier(value: unknown, path: Segment[]): string | undefined {
    if (!isSqlIdentifier(value)) return this.add(path, 'must be an SQL identifier ([A-Za-z_][A-Za-z0-9_]*, at most 63 characters)');
    return value;
  }

  qualified(value: unknown, path: Segment[], form: string): QualifiedName | undefined {
    const q = parseQualifiedName(value);
    if (!q) return this.add(path, `must be ${form}, each part an SQL identifier`);
    return q;
  }

  /**
   * A list of distinct identifiers. Duplicates compare case-insensitively: SQL Server's
   * default collations do, so `[id, ID]` names one column twice.
   */
  identifierList(value: unknown, path: Segment[], min: number, max: number): string[] | undefined {
    if (!Array.isArray(value)) return this.add(path, 'must be a list of SQL identifiers');
    if (value.length < min || value.length > max) {
      return this.add(path, min > 0 ? `must list between ${min} and ${max} columns` : `must list at most ${max} columns`);
    }
    const seen = new Map<string, number>();
    let ok = true;
    value.forEach((item, i) => {
      if (this.identifier(item, [...path, i]) === undefined) {
        ok = false;
        return;
      }
      const lower = (item as string).toLowerCase();
      const first = seen.get(lower);
      if (first !== undefined) {
        ok = false;
        this.add([...path, i], `duplicates ${renderPath([...path, first])}`);
      } else {
        seen.set(lower, i);
      }
    });
    return ok ? (value as string[]) : undefined;
  }

  /** One SELECT (or WITH … SELECT) statement; `;` is refused so no second statement rides along. */
  select(value: unknown, path: Segment[]): string | undefined {
    const sql = this.string(value, path);
    if (sql === undefined) return undefined;
    if (sql.length > MAX_SQL_CHARS) return this.add(path, `must be at most ${MAX_SQL_CHARS} characters`);
    if (!/^(select|with)\b/i.test(sql.trim())) return this.add(path, 'must be a single SELECT (or WITH … SELECT) statement');
    if (sql.includes(';')) return this.add(path, "must be a single statement without ';'");
    return sql.trim();
  }
}

function validateManifest(data: unknown, sourceName: string, check: Checker): Manifest | undefined {
  const root = check.map(data, [], ['version', 'bindings', 'routes'], ['version', 'bindings', 'routes']);
  if (!root) return undefined;
  if (root.has('version') && root.get('version') !== MANIFEST_VERSION) check.add(['version'], `must be ${MANIFEST_VERSION}`);

  const bindings: Record<string, Binding> = {};
  /** Declared names, valid or not: a route naming an invalid binding is not "unknown". */
  const declared = new Set<string>();
  // Without a readable bindings section, references cannot be judged: report the
  // section once rather than every route's references as unknown.
  const bindingsReadable = root.get('bindings') instanceof Map;
  if (root.has('bindings')) {
    for (const [name, value] of check.namedEntries(root.get('bindings'), ['bindings'], 'binding')) {
      declared.add(name);
      const binding = validateBinding(name, value, check);
      if (binding) bindings[name] = binding;
    }
  }

  const routes: Record<string, Route> = {};
  if (root.has('routes')) {
    const value = root.get('routes');
    const entries = check.namedEntries(value, ['routes'], 'route');
    if (value instanceof Map && value.size === 0) check.add(['routes'], 'must declare at least one route');
    for (const [name, value] of entries) {
      const route = validateRoute(name, value, { bindings, declared, readable: bindingsReadable }, check);
      if (route) routes[name] = route;
    }
  }
  if (check.issues.length > 0) return undefined;
  return { version: MANIFEST_VERSION, sourceName, bindings, routes };
}

// ---------------------------------------------------------------------------------------
// Bindings

const BINDING_KEYS = ['kind', 'url_env', 'username_env', 'password_env', 'secret_arn'] as const;
const ENV_NAME = /^[A-Z_][A-Z0-9_]{0,127}$/;
const SECRET_ARN = /^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:[A-Za-z0-9/_+=.@-]{1,512}$/;
/** Keys that would hold a credential or connection value in the manifest itself. */
const LITERAL_CREDENTIAL_KEY = /pass|pwd|secret|token|credential|auth|user|login|url|uri|dsn|conn|key/i;
/** An *_env value that is evidently a value, not a name: a URL, user@host, k=v;… */
const LOOKS_LIKE_VALUE = /[:/@=;]/;

function validateBinding(name: string, value: unknown, check: Checker): Binding | undefined {
  const path = ['bindings', name];
  if (!(value instanceof Map)) return check.add(path, 'must be a mapping');
  const before = check.issues.length;
  const credentialKeys = new Set<string>();
  for (const key of value.keys()) {
    if (typeof key === 'string' && !(BINDING_KEYS as readonly string[]).includes(key) && LITERAL_CREDENTIAL_KEY.test(key)) {
      credentialKeys.add(key);
      check.add(
        [...path, key],
        'literal credentials are not allowed in a manifest; name environment variables (url_env, username_env, password_env) or a Secrets Manager secret (secret_arn)',
        'delivery.binding_literal_credential',
      );
    }
  }
  const map = check.map(value, path, BINDING_KEYS, ['kind'], credentialKeys);
  if (!map) return undefined;
  const kind = map.has('kind') ? check.oneOf(map.get('kind'), [...path, 'kind'], BINDING_KINDS) : undefined;
  const env: Partial<Record<'url_env' | 'username_env' | 'password_env', string>> = {};
  for (const key of ['url_env', 'username_env', 'password_env'] as const) {
    if (!map.has(key)) continue;
    const v = map.get(key);
    if (typeof v === 'string' && ENV_NAME.test(v)) env[key] = v;
    else if (typeof v === 'string' && LOOKS_LIKE_VALUE.test(v)) {
      check.add([...path, key], 'must name an environment variable, not hold its value', 'delivery.binding_literal_credential');
    } else {
      check.add([...path, key], 'must be an environment variable name ([A-Z_][A-Z0-9_]*)');
    }
  }
  let secretArn: string | undefined;
  if (map.has('secret_arn')) {
    const v = map.get('secret_arn');
    if (typeof v === 'string' && SECRET_ARN.test(v)) secretArn = v;
    else check.add([...path, 'secret_arn'], 'must be a Secrets Manager secret ARN (arn:aws:secretsmanager:<region>:<account>:secret:<name>)');
  }
  if (!map.has('url_env') && !map.has('secret_arn')) {
    check.add(path, 'needs url_env (local runs) or secret_arn (AWS), or both');
  }
  if (check.issues.length > before || !kind) return undefined;
  return {
    name,
    kind,
    ...(env.url_env !== undefined && { urlEnv: env.url_env }),
    ...(env.username_env !== undefined && { usernameEnv: env.username_env }),
    ...(env.password_env !== undefined && { passwordEnv: env.password_env }),
    ...(secretArn !== undefined && { secretArn }),
  };
}

// ---------------------------------------------------------------------------------------
// Routes

interface BindingScope {
  bindings: Record<string, Binding>;
  declared: Set<string>;
  readable: boolean;
}

function validateRoute(name: string, value: unknown, scope: BindingScope, check: Checker): Route | undefined {
  const path = ['routes', name];
  const map = check.map(value, path, ['source', 'window', 'target', 'quality', 'chunk_rows', 'part_rows', 'max_concurrency'], ['source', 'window', 'target']);
  if (!map) return undefined;
  const before = check.issues.length;
  const source = map.has('source') ? validateSource(map.get('source'), [...path, 'source'], scope, check) : undefined;
  const window = map.has('window') ? validateWindowPolicy(map.get('window'), [...path, 'window'], check) : undefined;
  const target = map.has('target') ? validateTarget(map.get('target'), [...path, 'target'], scope, source, check) : undefined;
  const quality = validateQuality(map.get('quality'), [...path, 'quality'], target?.mode, check);
  const chunkRows = map.has('chunk_rows') ? check.integer(map.get('chunk_rows'), [...path, 'chunk_rows'], 1, MAX_CHUNK_ROWS) : DEFAULT_CHUNK_ROWS;
  // Default: DEFAULT_PART_ROWS, or fewer when chunks are so small that a part would exceed its chunk limit.
  const defaultPartRows = Math.min(DEFAULT_PART_ROWS, (chunkRows ?? DEFAULT_CHUNK_ROWS) * MAX_CHUNKS_PER_PART);
  const partRows = map.has('part_rows') ? check.integer(map.get('part_rows'), [...path, 'part_rows'], 1, MAX_PART_ROWS) : defaultPartRows;
  const maxConcurrency = map.has('max_concurrency') ? check.integer(map.get('max_concurrency'), [...path, 'max_concurrency'], 1, MAX_CONCURRENCY) : DEFAULT_MAX_CONCURRENCY;
  if (chunkRows !== undefined && partRows !== undefined && Math.ceil(partRows / chunkRows) > MAX_CHUNKS_PER_PART) {
    check.add([...path, 'part_rows'], `part_rows / chunk_rows must not exceed ${MAX_CHUNKS_PER_PART} chunks per part`);
  }
  if (check.issues.length > before || !source || !window || !target || !quality || chunkRows === undefined || partRows === undefined || maxConcurrency === undefined) return undefined;
  return { name, source, window, target, quality, chunkRows, partRows, maxConcurrency };
}

function validateBindingRef(
  value: unknown,
  path: Segment[],
  scope: BindingScope,
  kinds: readonly BindingKind[],
  role: string,
  check: Checker,
): string | undefined {
  if (!isManifestName(value)) return check.add(path, 'must name a binding');
  if (!scope.readable) return undefined;
  if (!scope.declared.has(value)) return check.add(path, 'names a binding that is not declared under bindings', 'delivery.binding_unknown');
  const binding = scope.bindings[value];
  if (!binding) return undefined; // declared but invalid: already reported there
  if (!kinds.includes(binding.kind)) return check.add(path, `a ${role} binding must be of kind ${kinds.join(' or ')}`);
  return value;
}

function validateSource(value: unknown, path: Segment[], scope: BindingScope, check: Checker): SourceSpec | undefined {
  const map = check.map(value, path, ['binding', 'table', 'query', 'time_column', 'key_columns'], ['binding', 'time_column', 'key_columns']);
  if (!map) return undefined;
  const before = check.issues.length;
  const binding = map.has('binding') ? validateBindingRef(map.get('binding'), [...path, 'binding'], scope, SOURCE_KINDS, 'source', check) : undefined;
  let from: SourceRelation | undefined;
  if (map.has('table') === map.has('query')) {
    check.add(path, 'needs exactly one of table or query');
  } else if (map.has('table')) {
    const table = check.qualified(map.get('table'), [...path, 'table'], 'database.table');
    if (table) from = { kind: 'table', table };
  } else {
    const sql = check.select(map.get('query'), [...path, 'query']);
    if (sql !== undefined) from = { kind: 'query', sql };
  }
  const timeColumn = map.has('time_column') ? check.identifier(map.get('time_column'), [...path, 'time_column']) : undefined;
  const keyColumns = map.has('key_columns') ? check.identifierList(map.get('key_columns'), [...path, 'key_columns'], 1, MAX_KEY_COLUMNS) : undefined;
  if (check.issues.length > before || !binding || !from || !timeColumn || !keyColumns) return undefined;
  return { binding, from, timeColumn, keyColumns };
}

function validateTarget(
  value: unknown,
  path: Segment[],
  scope: BindingScope,
  source: SourceSpec | undefined,
  check: Checker,
): TargetSpec | undefined {
  const map = check.map(value, path, ['binding', 'table', 'key_columns', 'time_column', 'mode'], ['binding', 'table', 'key_columns', 'mode']);
  if (!map) return undefined;
  const before = check.issues.length;
  const binding = map.has('binding') ? validateBindingRef(map.get('binding'), [...path, 'binding'], scope, TARGET_KINDS, 'target', check) : undefined;
  let table = map.has('table') ? check.qualified(map.get('table'), [...path, 'table'], 'schema.table') : undefined;
  if (table && isOwnedStagingName(table.name)) {
    // Retirement drops owned stages by their derived names; an authored table in that
    // namespace could be mistaken for one.
    table = check.add([...path, 'table'], `table names beginning ${STAGING_PREFIX} are reserved for owned staging`);
  }
  const keyColumns = map.has('key_columns') ? check.identifierList(map.get('key_columns'), [...path, 'key_columns'], 1, MAX_KEY_COLUMNS) : undefined;
  const timeColumn = map.has('time_column') ? check.identifier(map.get('time_column'), [...path, 'time_column']) : source?.timeColumn;
  const mode = map.has('mode') ? check.oneOf(map.get('mode'), [...path, 'mode'], TARGET_MODES) : undefined;
  if (check.issues.length > before || !binding || !table || !keyColumns || !timeColumn || !mode) return undefined;
  return { binding, table, keyColumns, timeColumn, mode };
}

function validateWindowPolicy(value: unknown, path: Segment[], check: Checker): WindowPolicy | undefined {
  if (!(value instanceof Map)) return check.add(path, 'must be a mapping');
  if (!value.has('kind')) return check.add([...path, 'kind'], 'is required (fixed or rolling)');
  const kind = check.oneOf(value.get('kind'), [...path, 'kind'], ['fixed', 'rolling'] as const);
  if (kind === 'fixed') {
    const map = check.map(value, path, ['kind', 'start', 'end'], ['start', 'end']);
    if (!map || !map.has('start') || !map.has('end')) return undefined;
    const bound = (key: 'start' | 'end'): number | undefined => {
      const v = map.get(key);
      const ms = typeof v === 'string' ? parseUtcTimestamp(v) : undefined;
      if (ms === undefined) return check.add([...path, key], 'must be an exact UTC timestamp such as 2026-11-01T00:00:00Z (seconds and Z required)');
      return ms;
    };
    const start = bound('start');
    const end = bound('end');
    if (start === undefined || end === undefined) return undefined;
    if (start >= end) return check.add([...path, 'end'], 'must be after start (the window is half-open [start, end))');
    return { kind: 'fixed', start: map.get('start') as string, end: map.get('end') as string };
  }
  if (kind === 'rolling') {
    const map = check.map(value, path, ['kind', 'days', 'boundary'], ['days', 'boundary']);
    if (!map) return undefined;
    const days = map.has('days') ? check.integer(map.get('days'), [...path, 'days'], 1, MAX_ROLLING_DAYS) : undefined;
    const boundary = map.has('boundary') ? check.oneOf<RollingBoundary>(map.get('boundary'), [...path, 'boundary'], ROLLING_BOUNDARIES) : undefined;
    if (days === undefined || boundary === undefined) return undefined;
    return { kind: 'rolling', days, boundary };
  }
  return undefined;
}

const ASSERTION_NAME = /^[a-z][a-z0-9_]{0,62}$/;
const PLACEHOLDER = /\{([^{}]*)\}/g;

function validateQuality(value: unknown, path: Segment[], mode: TargetMode | undefined, check: Checker): QualityRules | undefined {
  const map = value === undefined ? new Map<string, unknown>() : check.map(value, path, ['row_count_matches_receipts', 'unique_keys', 'not_null', 'assertions'], []);
  if (!map) return undefined;
  const before = check.issues.length;
  const rowCountMatchesReceipts = map.has('row_count_matches_receipts')
    ? check.boolean(map.get('row_count_matches_receipts'), [...path, 'row_count_matches_receipts'])
    : true;
  // MERGE (SQL Server) and ON CONFLICT (PostgreSQL) fail or become order-dependent when
  // two staged rows share a key, so merge always checks uniqueness first.
  let uniqueKeys = map.has('unique_keys') ? check.boolean(map.get('unique_keys'), [...path, 'unique_keys']) : mode === 'merge';
  if (uniqueKeys === false && mode === 'merge' && map.has('unique_keys')) {
    uniqueKeys = check.add([...path, 'unique_keys'], 'must be true when target.mode is merge (merge on keys needs unique keys)');
  }
  const notNull = map.has('not_null') ? check.identifierList(map.get('not_null'), [...path, 'not_null'], 0, MAX_NOT_NULL) : [];
  const assertions: QualityAssertion[] = [];
  if (map.has('assertions')) {
    const list = map.get('assertions');
    if (!Array.isArray(list)) check.add([...path, 'assertions'], 'must be a list');
    else if (list.length > MAX_ASSERTIONS) check.add([...path, 'assertions'], `must list at most ${MAX_ASSERTIONS} assertions`);
    else {
      const names = new Map<string, number>();
      list.forEach((item, i) => {
        const a = validateAssertion(item, [...path, 'assertions', i], check);
        if (!a) return;
        const first = names.get(a.name);
        if (first !== undefined) check.add([...path, 'assertions', i, 'name'], `duplicates ${renderPath([...path, 'assertions', first, 'name'])}`);
        else names.set(a.name, i);
        assertions.push(a);
      });
    }
  }
  if (check.issues.length > before || rowCountMatchesReceipts === undefined || uniqueKeys === undefined || !notNull) return undefined;
  return { rowCountMatchesReceipts, uniqueKeys, notNull, assertions };
}

function validateAssertion(value: unknown, path: Segment[], check: Checker): QualityAssertion | undefined {
  const map = check.map(value, path, ['name', 'sql', 'expect'], ['name', 'sql', 'expect']);
  if (!map) return undefined;
  const before = check.issues.length;
  const nameValue = map.get('name');
  const name = map.has('name')
    ? typeof nameValue === 'string' && ASSERTION_NAME.test(nameValue)
      ? nameValue
      : check.add([...path, 'name'], 'must match [a-z][a-z0-9_]{0,62}')
    : undefined;
  let sql = map.has('sql') ? check.select(map.get('sql'), [...path, 'sql']) : undefined;
  if (sql !== undefined) {
    const placeholders = [...sql.matchAll(PLACEHOLDER)].map((m) => m[1]);
    if (!placeholders.includes('staging')) sql = check.add([...path, 'sql'], 'must read the owned stage through the {staging} placeholder');
    else if (placeholders.some((p) => p !== 'staging')) sql = check.add([...path, 'sql'], 'the only placeholder is {staging}');
  }
  const expectValue = map.get('expect');
  const expected = map.has('expect')
    ? typeof expectValue === 'number' && Number.isSafeInteger(expectValue)
      ? expectValue
      : check.add([...path, 'expect'], 'must be an integer')
    : undefined;
  if (check.issues.length > before || name === undefined || sql === undefined || expected === undefined) return undefined;
  return { name, sql, expect: expected };
}
