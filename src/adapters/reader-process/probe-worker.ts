/**
 * The target reader's worker (docs/rules.md#bounded-reader step 3): the module the bounded reader's child
 * process runs (runner.ts; probe-reader.ts builds that reader). It opens its OWN
 * ClickHouse client over HTTP from its input (credentials travel over IPC only and are
 * never logged or returned), reads the generation (the UUID under the target name) from
 * system.tables, runs each bound original probe, reads the generation again, and returns
 * `{before, after, values}` (src/domain/quality/probes.ts: its input and result).
 *
 * Every statement is read-only by its own SETTINGS clause (`readonly = 2`,
 * `max_execution_time`, `cancel_http_readonly_queries_on_client_close`): over chdb and
 * HTTP a client-level setting would not reach every statement, and `readonly` in the
 * clause applies to that statement alone. Each probe runs at the cut point
 * `quality.target.probe` (faults from CUTPOINT_FAULTS, which the child inherits: a
 * rehearsal can slow or fail the read inside the killable process).
 *
 * With the sealed read retry in its input (`retry`, the admission plan's `keeper_no_node`
 * policy, docs/rules.md#observation-failures) each of these read-only statements that fails
 * with KEEPER_NO_NODE runs again through `retryRead`, within the policy's attempts and
 * elapsed time and never once the signal aborted (the parent revoked the channel at the
 * deadline). Without it every statement is attempted once.
 */
import { openClickHouse, type ClickHouseHandle } from '../clickhouse/client.js';
import { assertEnclosedSelect, settingsClause } from '../clickhouse/publication-sql.js';
import { faultsFromEnv } from '../fault-injector.js';
import { classifyClickHouseError } from '../../domain/clickhouse-errors.js';
import { READ_RETRY_LIMITS, retryRead, type ReadRetryPolicy } from '../../engine/read-retry.js';
import { scalarOf } from '../../domain/delivery/target-rules.js';
import { ValidationError } from '../../domain/errors.js';
import type { BoundedReadError } from '../../ports/bounded-reader.js';
import { QUALITY_CUT_POINTS } from '../../domain/quality/cut-points.js';
import type { ProbeWorkerInput, ProbeWorkerResult } from '../../domain/quality/probes.js';

function parseInput(value: unknown): ProbeWorkerInput {
  const v = value as Partial<ProbeWorkerInput> | null;
  const bad = (what: string): never => {
    throw new ValidationError('quality.reader_input_invalid', `probe worker: ${what}`);
  };
  if (!v || typeof v !== 'object') return bad('input must be an object');
  if (typeof v.url !== 'string' || !/^https?:\/\//.test(v.url)) bad('url must be http(s)');
  if (!v.relation || typeof v.relation.database !== 'string' || typeof v.relation.table !== 'string')
    bad('relation must be {database, table}');
  if (!Array.isArray(v.probes) || v.probes.length === 0) bad('probes must be a non-empty list');
  if (!Number.isSafeInteger(v.maxExecutionSeconds) || (v.maxExecutionSeconds as number) < 1)
    bad('maxExecutionSeconds must be a positive integer');
  const names = new Set<string>();
  for (const p of v.probes as unknown[]) {
    const probe = p as { name?: unknown; sql?: unknown } | null;
    if (!probe || typeof probe.name !== 'string' || typeof probe.sql !== 'string' || names.has(probe.name))
      bad('each probe needs a unique name and its sql');
    assertEnclosedSelect((probe as { sql: string }).sql, `probe ${(probe as { name: string }).name}`);
    names.add((probe as { name: string }).name);
  }
  if (v.retry !== undefined) {
    const { maxAttempts, maxElapsedMs } = (v.retry ?? {}) as Partial<NonNullable<ProbeWorkerInput['retry']>>;
    const within = (n: unknown, max: number) => Number.isSafeInteger(n) && (n as number) >= 1 && (n as number) <= max;
    if (!within(maxAttempts, READ_RETRY_LIMITS.maxAttempts) || !within(maxElapsedMs, READ_RETRY_LIMITS.maxElapsedMs))
      bad(
        `retry must be {maxAttempts 1..${READ_RETRY_LIMITS.maxAttempts}, maxElapsedMs 1..${READ_RETRY_LIMITS.maxElapsedMs}}`,
      );
  }
  return v as ProbeWorkerInput;
}

/** The input's sealed retry as `retryRead` takes it; undefined (one attempt) when there is none. */
function retryPolicyOf(input: ProbeWorkerInput): ReadRetryPolicy | undefined {
  return input.retry && { max_attempts: input.retry.maxAttempts, max_elapsed_ms: input.retry.maxElapsedMs };
}

/** One read-only statement of the reader: retried only as the sealed policy allows. */
type Read = <T>(statement: (signal: AbortSignal) => Promise<T>) => Promise<T>;

async function generationOf(
  handle: ClickHouseHandle,
  relation: ProbeWorkerInput['relation'],
  settings: string,
  read: Read,
): Promise<string | null> {
  const rows = await read(async (signal) => {
    const result = await handle.client.query({
      query: `SELECT toString(uuid) AS uuid FROM system.tables WHERE database = {d:String} AND name = {n:String} ${settings}`,
      query_params: { d: relation.database, n: relation.table },
      format: 'JSONEachRow',
      abort_signal: signal,
    });
    return result.json<{ uuid: string }>();
  });
  return rows[0]?.uuid ?? null;
}

/** The settings every statement of the reader carries (`readonly = 2`: reads only, G9). */
export function readOnlySettingsOf(maxExecutionSeconds: number) {
  return {
    readonly: 2,
    max_execution_time: maxExecutionSeconds,
    cancel_http_readonly_queries_on_client_close: 1,
  } as const;
}

export async function run(value: unknown, signal: AbortSignal): Promise<ProbeWorkerResult> {
  const input = parseInput(value);
  const faults = faultsFromEnv(process.env);
  const handle = await openClickHouse({
    kind: 'http',
    url: input.url,
    ...(input.username !== undefined ? { username: input.username } : {}),
    ...(input.password !== undefined ? { password: input.password } : {}),
  });
  const policy = retryPolicyOf(input);
  const read: Read = (statement) => retryRead('read', policy, signal, statement, classifyClickHouseError);
  try {
    // The server cancels a read-only query whose client connection closed (the child killed at the deadline);
    // whether it did is still not known here: remote termination stays UNVERIFIED.
    const readOnly = readOnlySettingsOf(input.maxExecutionSeconds);
    const before = await generationOf(handle, input.relation, settingsClause(readOnly), read);
    const values: Record<string, number | string | null> = {};
    const settings = settingsClause({ ...readOnly, output_format_json_quote_64bit_integers: 1 });
    for (const probe of input.probes) {
      values[probe.name] = await faults.at(QUALITY_CUT_POINTS.targetProbe, async () => {
        const rows = await read(async (attemptSignal) => {
          const result = await handle.client.query({
            query: `SELECT * FROM (\n${probe.sql}\n) LIMIT 1 ${settings}`,
            format: 'JSONCompactEachRow',
            abort_signal: attemptSignal,
          });
          return result.json<unknown[]>();
        });
        return scalarOf(rows[0]?.[0]);
      });
    }
    const after = await generationOf(handle, input.relation, settingsClause(readOnly), read);
    return { before, after, values };
  } finally {
    await handle.close();
  }
}

/** Structured fields only (the ClickHouse class, code and type), never a message: it may carry values. */
export function classify(error: unknown): BoundedReadError {
  const { errorClass, code, type } = classifyClickHouseError(error);
  const known = (error as { name?: unknown } | null)?.name;
  // Our own stable errors (an injected fault, a refused input) keep their stable name.
  const ownClass = typeof known === 'string' && /^[A-Z][A-Za-z]+\.[A-Za-z]+$/.test(known) ? known : undefined;
  return {
    class: errorClass === 'UNCLASSIFIED' && ownClass ? ownClass : errorClass,
    ...(code !== undefined ? { code } : {}),
    ...(type !== undefined ? { type } : {}),
  };
}
