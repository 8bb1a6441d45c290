import { parseDocument } from 'yaml';
import { ValidationError } from '../errors.js';
import { echoed, someOf } from '../echo.js';
import { ownEntry } from '../own-entry.js';
import { isManifestName } from './identifiers.js';
import { bindingScope, refuseLiteralCredentials } from './manifest-bindings.js';
import { Checker } from './manifest-checker.js';
import { refuseKindSettings } from './manifest-quality.js';
import { routeKind, validateRoute } from './manifest-routes.js';
import { checkScalars } from './manifest-scalars.js';
import { ManifestSchema } from './manifest-schema.js';
import { addShapeIssues, isRecord, toPlain } from './manifest-shape.js';
import {
  MANIFEST_VERSION,
  type Manifest,
  type ManifestIssue,
  type Route,
  type SelectedRoute,
  type Selector,
  type SqlTargetMode,
  type TargetSpec,
} from './manifest-types.js';

/**
 * Route manifests (issue 4): a YAML file of named routes, addressed as `route.yaml#daily`.
 * This module parses and validates the text; reading the file is the caller's job.
 * The shapes are in manifest-types.ts; the checks in manifest-checker.ts (issue collection),
 * manifest-bindings.ts and manifest-routes.ts.
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
 *       binding: warehouse        # mssql or postgres (or clickhouse: mode exchange only, see below)
 *       table: dbo.events_daily   # schema.table (database.table for clickhouse); cutpoint_stg_* is reserved for owned stages
 *       key_columns: [event_id]
 *       time_column: event_time   # optional; defaults to source.time_column
 *       mode: replace_window      # replace_window | merge (merge upserts on key_columns) | exchange (clickhouse)
 *     quality:                    # optional (absent: the defaults); `{}`, or every check off, is refused
 *       row_count_matches_receipts: true    # default true
 *       unique_keys: true                   # default: true for merge, false otherwise
 *       not_null: [event_id, event_time]    # default []
 *       assertions:                         # default []
 *         - name: no_future_events
 *           sql: "SELECT COUNT(*) FROM {staging} WHERE event_time > now()"
 *           expect: 0
 *     chunk_rows: 50000           # optional; 1..100000, default 50000
 *     part_rows: 2000000          # optional; rows per part (sub-window), chunk_rows..100000000, default 2000000
 *                                 # (or chunk_rows x 100000 when that is less)
 *     max_concurrency: 4          # optional; parts extracted and loaded at once, 1..100, default 4
 * ```
 *
 * Parts: begin's plan step cuts the window into parts of about `part_rows` rows (time
 * ranges sized by one count query); each part is extracted and loaded by its own Lambda,
 * `max_concurrency` at a time (size it to what the target ingests in parallel). A part
 * holds at most 100,000 chunks, so `part_rows / chunk_rows` must not exceed that. A chunk
 * of wide rows is cut before `chunk_rows`, at 16 Mi characters of canonical JSONL (parts.ts
 * CHUNK_TEXT_LIMIT, recorded in the plan), so one chunk always fits the part Lambda.
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
 * - A clickhouse target publishes by `exchange` only, and only a clickhouse target does
 *   (`delivery.target_mode_unsupported`). Its route is a v2 quality route: `quality.capsule:
 *   v2` is required, assertions read `{relation}`, nothing may degrade a required probe, and
 *   the governance settings are parsed into `QualityRules.governance` (manifest-quality.ts,
 *   manifest-governance.ts).
 */

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
    throw new ValidationError(
      'delivery.selector_invalid',
      'manifest selector must be <file>#<route>, route [a-z][a-z0-9_-]{0,63}',
    );
  }
  return { file, route };
}

export function selectorText(selector: Selector): string {
  return `${selector.file}#${selector.route}`;
}

/** The route a selector names, with its bindings; `delivery.selector_unknown` if absent. */
export function selectRoute(manifest: Manifest, selector: Pick<Selector, 'route'> | string): SelectedRoute {
  const name =
    typeof selector === 'string' ? (selector.includes('#') ? parseSelector(selector).route : selector) : selector.route;
  const route = ownEntry(manifest.routes, name);
  if (!route) {
    const known = someOf(Object.keys(manifest.routes).sort());
    throw new ValidationError(
      'delivery.selector_unknown',
      `${echoed(manifest.sourceName)} has no route ${isManifestName(name) ? name : '(invalid name)'}; routes: ${known || '(none)'}`,
    );
  }
  const sourceBinding = ownEntry(manifest.bindings, route.source.binding);
  const targetBinding = ownEntry(manifest.bindings, route.target.binding);
  // parseManifest guarantees both; a hand-built Manifest may not.
  if (!sourceBinding || !targetBinding) {
    throw new ValidationError(
      'delivery.binding_unknown',
      `routes.${name}: ${!sourceBinding ? 'source' : 'target'} binding is not declared`,
    );
  }
  return { name, route, sourceBinding, targetBinding };
}

/**
 * The mode an SQL target publishes by. An exchange route (a clickhouse target) never reaches
 * the SQL publication path — its binding opens no SQL target — and this says so to the type
 * checker and at run time (`delivery.target_mode_unsupported`).
 */
export function sqlTargetMode(target: Pick<TargetSpec, 'mode'>): SqlTargetMode {
  if (target.mode === 'exchange') {
    throw new ValidationError(
      'delivery.target_mode_unsupported',
      'an exchange route publishes through the clickhouse publication flow, not into an SQL target',
    );
  }
  return target.mode;
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
    throw unparsable(
      `${where}: YAML ${problem.code}${YAML_HINTS[problem.code] ? ` (${YAML_HINTS[problem.code]})` : ''}`,
    );
  }
  let data: unknown;
  try {
    // Maps as Map: no prototype keys (`__proto__`), and non-string keys stay detectable.
    data = doc.toJS({ mapAsMap: true, maxAliasCount: 100 });
  } catch {
    // Unresolved aliases or alias expansion beyond the limit.
    throw unparsable(`${sourceName}: YAML aliases could not be resolved within limits`);
  }
  const check = new Checker((section) => namesIn(data, section));
  checkScalars(doc, text, check);
  const manifest = validateManifest(toPlain(data, [], check), sourceName, check);
  const issues = check.issues;
  if (issues.length > 0 || !manifest) throw new ManifestError(sourceName, issues);
  return manifest;
}

/** A section's route or binding names as written (issues are listed in that order). */
function namesIn(data: unknown, section: string): string[] {
  const value = data instanceof Map ? data.get(section) : undefined;
  return value instanceof Map ? [...value.keys()].map(String) : [];
}

/**
 * Before the shape, what is refused with its own code (literal credentials, each route kind's
 * quality settings); then the shape (ManifestSchema); then what needs more than one node
 * (binding references, a route kind's rules, part sizing).
 */
function validateManifest(data: unknown, sourceName: string, check: Checker): Manifest | undefined {
  const root = isRecord(data) ? data : undefined;
  refuseLiteralCredentials(root?.bindings, check);
  const scope = bindingScope(root?.bindings, check);
  const routes = isRecord(root?.routes) ? root.routes : {};
  for (const [name, route] of Object.entries(routes)) {
    if (isRecord(route))
      refuseKindSettings(route.quality, ['routes', name, 'quality'], routeKind(route.target, scope), check);
  }
  addShapeIssues(ManifestSchema.safeParse(data, { reportInput: true }), data, check);
  if (isRecord(root?.routes) && Object.keys(root.routes).length === 0 && !check.has(['routes']))
    check.add(['routes'], 'must declare at least one route');
  const parsed: Record<string, Route> = {};
  for (const [name, value] of Object.entries(routes)) {
    const route = validateRoute(name, value, scope, check);
    if (route) parsed[name] = route;
  }
  if (check.has([])) return undefined;
  return { version: MANIFEST_VERSION, sourceName, bindings: { ...scope.bindings }, routes: parsed };
}
