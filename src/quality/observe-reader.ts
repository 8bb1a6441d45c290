import { resolveBinding, type ConnectionSettings } from '../delivery/bindings.js';
import type { DeliveryDeps } from '../delivery/deps.js';
import {
  CLICKHOUSE_ERROR_CLASSES,
  observationDiagnosticOf,
  type ClickHouseErrorClass,
} from '../domain/clickhouse-errors.js';
import type { RemoteTermination } from '../domain/quality/capsule.js';
import type { ObservationRetryPolicy } from '../domain/quality/core.js';
import {
  bindProbe,
  evaluateProbes,
  type OriginalProbe,
  type ProbeEvaluation,
  type ProbeWorkerInput,
  type ProbeWorkerResult,
  type RelationRef,
} from '../domain/quality/probes.js';
import type { BoundedReader } from '../ports/bounded-reader.js';
import type { Clock } from '../ports/clock.js';
import type { FaultInjector } from '../ports/faults.js';
import type { SecretsPort } from '../ports/secrets.js';
import { REAP_BOUND_MS, TERM_GRACE_MS } from './admission.js';
import { QUALITY_CUT_POINTS } from '../domain/quality/cut-points.js';

/**
 * The bounded target reader as the observe use case sees it (docs/rules.md#bounded-reader steps 3–5, 7): the
 * bounded reader running the probe worker (src/adapters/reader-process/probe-worker.ts) in
 * a killable child process, where that child connects (the target binding's HTTP URL),
 * and the calling process's time budget (the Lambda's getRemainingTimeInMillis) with the
 * reserve kept back for termination, reaping and the persist-and-release transaction.
 */
export interface TargetReader {
  reader: BoundedReader;
  /** Passed to the child over IPC only; never printed or returned. */
  connection: ConnectionSettings;
  /** Milliseconds the calling process has left; absent: only the observation deadline bounds the read. */
  remainingMs?: () => number;
  /** Kept back from the remaining budget (default 30 s, docs/rules.md#bounded-reader). */
  reserveMs?: number;
}

export const DEFAULT_RESERVE_MS = 30_000;

/**
 * How an observation's bounded reader is made: the reader-process adapter's probe worker
 * (src/adapters/reader-process/probe-reader.ts `probeReader`), given by the composition root.
 */
export type ProbeReaderOf = (options: {
  clock: Clock;
  termGraceMs: number;
  reapBoundMs: number;
  faults?: { injector: FaultInjector; reapCutPoint: string };
}) => BoundedReader;

export interface TargetReaderOptions {
  /** Where a local run reads the binding's URL (url_env); default the process environment. */
  env?: Readonly<Record<string, string | undefined>>;
  /** A deployed run reads the binding's secret instead. */
  secrets?: SecretsPort;
  remainingMs?: () => number;
  reserveMs?: number;
  /** Runs termination and reaping at `quality.worker.reap`; default the deps' injector. */
  faults?: FaultInjector;
}

/** What a target reader is built from: the route (its target binding), the clock, the run's fault injector. */
export type TargetReaderDeps = Pick<DeliveryDeps, 'route' | 'ports' | 'faults'>;

/** How an observation (ObserveTarget, resume's observe-target, the operator's observe) builds its reader: the exchange mode carries one (src/publication/exchange-deps.ts). */
export type ObserveReader = (deps: TargetReaderDeps) => Promise<TargetReader>;

/** The target binding resolved like every binding, the probe worker in the bounded reader `readerOf` makes. */
export async function targetReaderOf(
  deps: TargetReaderDeps,
  readerOf: ProbeReaderOf,
  options: TargetReaderOptions = {},
): Promise<TargetReader> {
  const faults = options.faults ?? deps.faults;
  const connection = await resolveBinding(deps.route.targetBinding, {
    env: options.env ?? process.env,
    ...(options.secrets ? { secrets: options.secrets } : {}),
  });
  const reader = readerOf({
    clock: deps.ports.clock,
    termGraceMs: TERM_GRACE_MS,
    reapBoundMs: REAP_BOUND_MS,
    ...(faults ? { faults: { injector: faults, reapCutPoint: QUALITY_CUT_POINTS.workerReap } } : {}),
  });
  return {
    reader,
    connection,
    ...(options.remainingMs ? { remainingMs: options.remainingMs } : {}),
    ...(options.reserveMs !== undefined ? { reserveMs: options.reserveMs } : {}),
  };
}

/**
 * deadlineAt = min(now + observe deadline, now + remaining budget − reserve)
 * (docs/rules.md#bounded-reader).
 */
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
 * left until the deadline, and the read retry of the SEALED plan (prepared.json's
 * `plan.retry`, never the route given now: a manifest edited after the seal changes nothing
 * here; docs/rules.md#observation-failures).
 */
export function readerInputOf(
  tr: TargetReader,
  request: {
    probes: readonly OriginalProbe[];
    relation: RelationRef;
    deadlineAt: Date;
    now: Date;
    retry: ObservationRetryPolicy;
  },
): ProbeWorkerInput {
  const { retry } = request;
  return {
    url: tr.connection.url,
    ...(tr.connection.username !== undefined ? { username: tr.connection.username } : {}),
    ...(tr.connection.password !== undefined ? { password: tr.connection.password } : {}),
    relation: request.relation,
    probes: request.probes.map((p) => ({ name: p.name, sql: bindProbe(p.sql, request.relation) })),
    maxExecutionSeconds: Math.max(1, Math.ceil((request.deadlineAt.getTime() - request.now.getTime()) / 1000)),
    ...(retry.kind === 'keeper_no_node'
      ? { retry: { maxAttempts: retry.maxAttempts, maxElapsedMs: retry.maxElapsedMs } }
      : {}),
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

/**
 * The stable diagnostic code of a TARGET_PENDING reading (docs/rules.md#diagnostic-codes): our
 * own deadline is a timeout; a ClickHouse class maps as the classifier says.
 */
export function pendingCodeOf(errorClass: string): string {
  if (errorClass === 'DEADLINE') return 'quality.target_observation_timeout';
  return observationDiagnosticOf(isClickHouseClass(errorClass) ? errorClass : 'UNCLASSIFIED', 'target');
}
