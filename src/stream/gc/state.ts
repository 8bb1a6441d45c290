import { integerFromEnv } from '../../domain/env-integer.js';
import { ValidationError } from '../../domain/errors.js';
import type { LaneRef } from '../../domain/stream.js';
import {
  graceSeconds,
  lanePrefixes,
  parseGrace,
  policyDigestOf,
  validateGcLane,
  type Fate,
  type GcPolicy,
} from './model.js';

/**
 * The state one GC execution carries from step to step (always bounded: at most one page
 * of candidates or journals). Every step takes it whole and returns it whole.
 */
export interface GcRun extends LaneRef {
  policy: GcPolicy;
  policyDigest: string;
  dryRun: boolean;
  /** Bucket listing position: which lane prefix, and the last key listed under it. */
  scan: { prefix: number; after?: string; done: boolean };
  /**
   * Sweep position: the lane's roots first (the last root key seen), then its leases (the
   * last lease sort key seen; expired ones are retired, retention.ts), then its attempt
   * evidence (the last `collected#`/`spent#` sort key seen; attempt-retention.ts). No phase: roots.
   */
  sweep: { phase?: SweepPhase; after?: string; done: boolean };
  /** The scanned page's mark candidates: key and the exact root version the scan saw. */
  candidates: Array<{ key: string; version: number; epoch: number }>;
  /** The swept page's DELETING roots: key, epoch and delete id of the sealed journal. */
  deleting: Array<{ key: string; epoch: number; deleteId: string }>;
  totals: GcTotals;
  /** Dry run only: the first keys that would be marked (empty otherwise). */
  wouldMark: string[];
  /** Pages (Scan or Drain) one execution may take before it ends with a continuation. */
  pagesPerExecution: number;
  /** This execution's pages: the flow's Begin state resets it; `spent` sends the flow to Continue. */
  execution: { pages: number; spent: boolean };
}

export interface GcTotals {
  scanned: number;
  rootsCreated: number;
  lateObjects: number;
  /** Scanned objects by fate (compactions' outputs included), and compactions' outputs alone. */
  live: number;
  mayCommit: number;
  trimmed: number;
  dead: number;
  superseded: number;
  compacted: { live: number; mayCommit: number; trimmed: number; dead: number };
  /** DEAD or SUPERSEDED, ACTIVE and still inside the orphan grace. */
  inGrace: number;
  marked: number;
  unmarked: number;
  waitingOnLeases: number;
  sealed: number;
  /** DELETING roots put back to ACTIVE: the re-check just before the DELETE no longer held (recheck.ts). */
  unsealed: number;
  deleted: number;
  finalized: number;
  /** Roots closed as late objects because the journal's identity was still there after its DELETE went out. */
  lateAfterDelete: number;
  /**
   * GC's own records retired (retention.ts): DELETED roots one grace after their delete,
   * expired leases, and the collected records and spent markers of time-marked attempts
   * past their window whose WAL objects are gone (attempt-retention.ts).
   */
  retired: { roots: number; leases: number; attempts: number };
}

export type SweepPhase = 'roots' | 'leases' | 'attempts';
const SWEEP_PHASES: readonly SweepPhase[] = ['roots', 'leases', 'attempts'];

export const PAGE = 100;
/**
 * Pages (of at most PAGE keys) one execution takes, scan and sweep together, before it
 * ends with `{ done: false, next }`: its history stays bounded whatever the lane holds
 * (statemachines/stream-gc.asl.json). A run's input may lower it, never raise it.
 */
export const EXECUTION_PAGES = 200;
const DRY_RUN_SAMPLE = 100;
export { DRY_RUN_SAMPLE };

const zero = (): GcTotals => ({
  scanned: 0,
  rootsCreated: 0,
  lateObjects: 0,
  live: 0,
  mayCommit: 0,
  trimmed: 0,
  dead: 0,
  superseded: 0,
  compacted: { live: 0, mayCommit: 0, trimmed: 0, dead: 0 },
  inGrace: 0,
  marked: 0,
  unmarked: 0,
  waitingOnLeases: 0,
  sealed: 0,
  unsealed: 0,
  deleted: 0,
  finalized: 0,
  lateAfterDelete: 0,
  retired: { roots: 0, leases: 0, attempts: 0 },
});

const FATE_TOTAL = {
  LIVE: 'live',
  MAY_COMMIT: 'mayCommit',
  TRIMMED: 'trimmed',
  DEAD: 'dead',
  SUPERSEDED: 'superseded',
} as const;

/** Counts one scanned object's fate (a compaction's output also under `compacted`; it is never SUPERSEDED itself). */
export function countFate(totals: GcTotals, fate: Fate, compacted: boolean): void {
  const name = FATE_TOTAL[fate];
  totals[name]++;
  if (compacted && name !== 'superseded') totals.compacted[name]++;
}

/**
 * The run as a step receives it: the first step gets the operator's input
 * `{stream, partition, grace?, dryRun?, pagesPerExecution?}` (grace: `10m`, its unit required),
 * later steps the run.
 * Everything is validated before anything is written.
 */
export function runOf(input: unknown, defaultGraceSeconds: number): GcRun {
  const v = (input ?? {}) as Partial<GcRun> & { grace?: unknown };
  const lane = validateGcLane(v);
  // A copy: a step never mutates its input (a retry of the step gets the same input).
  if (v.policy && v.scan && v.sweep && v.totals) return continuing(structuredClone(v) as GcRun, lane);
  if (v.dryRun !== undefined && typeof v.dryRun !== 'boolean')
    throw new ValidationError('stream.invalid_dry_run', 'dryRun must be a boolean');
  const pagesPerExecution = pagesOf(v.pagesPerExecution);
  const graceSeconds = v.grace === undefined ? defaultGraceSeconds : parseGrace(v.grace);
  const policy: GcPolicy = { graceSeconds, prefixes: lanePrefixes(lane) };
  return {
    ...lane,
    policy,
    policyDigest: policyDigestOf(policy),
    dryRun: v.dryRun === true,
    scan: { prefix: 0, done: false },
    sweep: { done: false },
    candidates: [],
    deleting: [],
    totals: zero(),
    wouldMark: [],
    pagesPerExecution,
    execution: { pages: 0, spent: false },
  };
}

/** The configured page budget per execution (CUTPOINT_GC_PAGES), validated; undefined: the flow's default. */
export function pagesFromEnv(env: NodeJS.ProcessEnv): number | undefined {
  return integerFromEnv(
    env,
    'CUTPOINT_GC_PAGES',
    { min: 1, max: EXECUTION_PAGES, unit: 'pages' },
    'stream.invalid_gc_pages',
  );
}

function pagesOf(value: unknown): number {
  if (value === undefined) return EXECUTION_PAGES;
  if (!Number.isSafeInteger(value) || (value as number) < 1 || (value as number) > EXECUTION_PAGES) {
    throw new ValidationError(
      'stream.invalid_gc_pages',
      `pagesPerExecution must be an integer in [1, ${EXECUTION_PAGES}]`,
    );
  }
  return value as number;
}

/** A Scan or Drain step took a page: once the execution's budget is spent the flow ends with a continuation. */
export function countPage(run: GcRun): void {
  const pages = run.execution.pages + 1;
  run.execution = { pages, spent: pages >= run.pagesPerExecution };
}

/**
 * A run handed from step to step, or a continuation (`next` of an execution that spent its
 * pages) given to a new execution: its policy must still be this lane's (its own prefixes,
 * a valid grace, the digest of exactly that) — a forged state cannot widen what GC touches.
 */
function continuing(run: GcRun, lane: LaneRef): GcRun {
  const policy: GcPolicy = { graceSeconds: graceSeconds(run.policy.graceSeconds), prefixes: lanePrefixes(lane) };
  const same =
    JSON.stringify(run.policy.prefixes) === JSON.stringify(policy.prefixes) &&
    run.policyDigest === policyDigestOf(policy);
  if (!same)
    throw new ValidationError(
      'stream.gc_policy_mismatch',
      `the run's policy is not lane ${lane.stream}/${lane.partition}'s: start a fresh run`,
    );
  run.pagesPerExecution = pagesOf(run.pagesPerExecution);
  // A continuation from before the totals grew: the counters it lacks start at zero.
  run.totals = {
    ...zero(),
    ...run.totals,
    compacted: { ...zero().compacted, ...run.totals.compacted },
    retired: { ...zero().retired, ...run.totals.retired },
  };
  if (run.sweep.phase !== undefined && !SWEEP_PHASES.includes(run.sweep.phase)) {
    throw new ValidationError(
      'stream.gc_policy_mismatch',
      "the run's sweep phase is not one GC knows: start a fresh run",
    );
  }
  const pages = run.execution?.pages;
  run.execution =
    Number.isSafeInteger(pages) && pages >= 0
      ? { pages, spent: pages >= run.pagesPerExecution }
      : { pages: 0, spent: false };
  return run;
}

/** Items of one page handled at a time inside a step (bounded: a page is at most PAGE). */
const PARALLEL = 8;

/**
 * Runs `work` over a page's items, at most PARALLEL at once, in no particular order. After
 * the first failure no new item starts, and the step fails only once every item in flight
 * has settled: a failed step leaves no work of its own running behind it (such a zombie
 * would keep writing into the run state the step's retry is building — seen as a key
 * deleted twice in the full GC matrix under load).
 */
export async function eachOfPage<T>(
  items: readonly T[],
  work: (item: T, index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  let failure: { error: unknown } | undefined;
  const worker = async () => {
    while (!failure && next < items.length) {
      const i = next++;
      try {
        await work(items[i]!, i);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL, items.length) }, worker));
  if (failure) throw failure.error;
}
