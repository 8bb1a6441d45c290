import { processBoundedReader } from '../adapters/reader-process/runner.js';
import { resolveBinding, type ConnectionSettings } from '../delivery/bindings.js';
import type { DeliveryDeps } from '../delivery/deps.js';
import { processEntry } from '../local/process-entry.js';
import {
  CLICKHOUSE_ERROR_CLASSES,
  observationDiagnosticOf,
  type ClickHouseErrorClass,
} from '../domain/clickhouse-errors.js';
import type { RemoteTermination } from '../domain/quality/capsule.js';
import {
  bindProbe,
  evaluateProbes,
  type OriginalProbe,
  type ProbeEvaluation,
  type RelationRef,
} from '../domain/quality/probes.js';
import type { BoundedReader } from '../ports/bounded-reader.js';
import type { FaultInjector } from '../ports/faults.js';
import type { SecretsPort } from '../ports/secrets.js';
import { REAP_BOUND_MS, TERM_GRACE_MS } from './admission.js';
import { QUALITY_CUT_POINTS } from './cut-points.js';
import type { ProbeWorkerInput, ProbeWorkerResult } from './probe-worker.js';

/**
 * The bounded target reader as the observe use case sees it (spec §4.4 steps 3–5, 7): the
 * bounded reader running the probe worker (src/quality/probe-worker.ts) in a killable child
 * process, where that child connects (the target binding's HTTP URL), and the calling
 * process's time budget (the Lambda's getRemainingTimeInMillis) with the reserve kept back
 * for termination, reaping and the persist-and-release transaction.
 */
export interface TargetReader {
  reader: BoundedReader;
  /** Passed to the child over IPC only; never printed or returned. */
  connection: ConnectionSettings;
  /** Milliseconds the calling process has left; absent: only the observation deadline bounds the read. */
  remainingMs?: () => number;
  /** Kept back from the remaining budget (default 30 s, spec §4.4). */
  reserveMs?: number;
}

export const DEFAULT_RESERVE_MS = 30_000;

/** The worker module the generic child entry imports: probe-worker.ts beside this module, or the CLI bundle's (processEntry). */
export const PROBE_WORKER_ENTRY = processEntry(import.meta.url, 'probe-worker');

export interface TargetReaderOptions {
  /** Where a local run reads the binding's URL (url_env); default the process environment. */
  env?: Readonly<Record<string, string | undefined>>;
  /** A deployed run reads the binding's secret instead. */
  secrets?: SecretsPort;
  remainingMs?: () => number;
  reserveMs?: number;
  /** Runs termination and reaping at `quality.worker.reap`; default the deps' injector. */
  faults?: FaultInjector;
  /** A Lambda bundle's own file and worker key (runner.ts); default the generic child entry and the worker module path. */
  childEntry?: string;
  entry?: string;
}

/** The default reader: the target binding resolved like every binding, the probe worker in a forked child. */
export async function targetReaderOf(
  deps: Pick<DeliveryDeps, 'route' | 'ports' | 'faults'>,
  options: TargetReaderOptions = {},
): Promise<TargetReader> {
  const faults = options.faults ?? deps.faults;
  const connection = await resolveBinding(deps.route.targetBinding, {
    env: options.env ?? process.env,
    ...(options.secrets ? { secrets: options.secrets } : {}),
  });
  const reader = processBoundedReader({
    entry: options.entry ?? PROBE_WORKER_ENTRY,
    clock: deps.ports.clock,
    termGraceMs: TERM_GRACE_MS,
    reapBoundMs: REAP_BOUND_MS,
    ...(options.childEntry ? { childEntry: options.childEntry } : {}),
    ...(faults ? { faults: { injector: faults, reapCutPoint: QUALITY_CUT_POINTS.workerReap } } : {}),
  });
  return {
    reader,
    connection,
    ...(options.remainingMs ? { remainingMs: options.remainingMs } : {}),
    ...(options.reserveMs !== undefined ? { reserveMs: options.reserveMs } : {}),
  };
}

/** deadlineAt = min(now + observe deadline, now + remaining budget − reserve) (spec §4.4). */
export function deadlineOf(
  now: Date,
  observeDeadlineS: number,
  tr: Pick<TargetReader, 'remainingMs' | 'reserveMs'>,
): Date {
  const byDeadline = now.getTime() + observeDeadlineS * 1000;
  const byBudget = tr.remainingMs
    ? now.getTime() + tr.remainingMs() - (tr.reserveMs ?? DEFAULT_RESERVE_MS)
    : Number.POSITIVE_INFINITY;
  return new Date(Math.min(byDeadline, byBudget));
}

/** What one bounded read of the target decided, before anything is persisted. */
export type TargetReading =
  | { kind: 'EVALUATED'; evaluation: ProbeEvaluation; generation: { before: string | null; after: string | null } }
  | { kind: 'GENERATION_CHANGED' }
  | { kind: 'PENDING'; errorClass: string; remoteTermination: RemoteTermination }
  | { kind: 'INCOMPLETE'; queryOutstanding: boolean };

function isResult(value: unknown): value is ProbeWorkerResult {
  const v = value as Partial<ProbeWorkerResult> | null;
  const generation = (g: unknown) => g === null || typeof g === 'string';
  return (
    !!v &&
    typeof v === 'object' &&
    generation(v.before) &&
    generation(v.after) &&
    !!v.values &&
    typeof v.values === 'object' &&
    !Array.isArray(v.values)
  );
}

/**
 * The worker's input: the ORIGINAL probes bound to the target relation (a probe that does
 * not bind is refused here, before any process starts), `max_execution_time` the seconds
 * left until the deadline.
 */
export function readerInputOf(
  tr: TargetReader,
  request: { probes: readonly OriginalProbe[]; relation: RelationRef; deadlineAt: Date; now: Date },
): ProbeWorkerInput {
  return {
    url: tr.connection.url,
    ...(tr.connection.username !== undefined ? { username: tr.connection.username } : {}),
    ...(tr.connection.password !== undefined ? { password: tr.connection.password } : {}),
    relation: request.relation,
    probes: request.probes.map((p) => ({ name: p.name, sql: bindProbe(p.sql, request.relation) })),
    maxExecutionSeconds: Math.max(1, Math.ceil((request.deadlineAt.getTime() - request.now.getTime()) / 1000)),
  };
}

/**
 * One bounded read of the bound probes. A result counts only when the generation read
 * before and after the probes is exactly `candidateUuid`. A deadline or an error after
 * VERIFIED local termination is TARGET_PENDING (remote termination UNVERIFIED when a
 * request may have been in flight); an unverified reap is INCOMPLETE.
 */
export async function readTarget(
  tr: TargetReader,
  request: {
    input: ProbeWorkerInput;
    probes: readonly OriginalProbe[];
    candidateUuid: string;
    token: string;
    deadlineAt: Date;
  },
): Promise<TargetReading> {
  const { input } = request;
  const outcome = await tr.reader.read({ input, token: request.token, deadlineAt: request.deadlineAt.getTime() });
  switch (outcome.kind) {
    case 'INCOMPLETE':
      return { kind: 'INCOMPLETE', queryOutstanding: outcome.queryOutstanding };
    case 'DEADLINE':
    case 'ERROR':
      return {
        kind: 'PENDING',
        errorClass: outcome.kind === 'DEADLINE' ? 'DEADLINE' : (outcome.error?.class ?? 'WorkerFailed'),
        remoteTermination: outcome.queryOutstanding ? 'UNVERIFIED' : 'not_applicable',
      };
    case 'RESULT': {
      const results = outcome.results;
      if (!isResult(results))
        return { kind: 'PENDING', errorClass: 'ProtocolViolation', remoteTermination: 'not_applicable' };
      if (results.before !== request.candidateUuid || results.after !== request.candidateUuid)
        return { kind: 'GENERATION_CHANGED' };
      return {
        kind: 'EVALUATED',
        evaluation: evaluateProbes(request.probes, results.values),
        generation: { before: results.before, after: results.after },
      };
    }
  }
}

const isClickHouseClass = (value: string): value is ClickHouseErrorClass =>
  (CLICKHOUSE_ERROR_CLASSES as readonly string[]).includes(value);

/** The stable diagnostic code of a TARGET_PENDING reading (spec §7.4): our own deadline is a timeout; a ClickHouse class maps as the classifier says. */
export function pendingCodeOf(errorClass: string): string {
  if (errorClass === 'DEADLINE') return 'quality.target_observation_timeout';
  return observationDiagnosticOf(isClickHouseClass(errorClass) ? errorClass : 'UNCLASSIFIED', 'target');
}
