import { randomUUID } from 'node:crypto';
import type { LaneRef } from '../../../domain/stream.js';
import { listLeases } from '../../../stream/gc/leases.js';
import { graceFromEnv, parseGrace } from '../../../stream/gc/model.js';
import { pagesFromEnv } from '../../../stream/gc/state.js';
import { loadHead } from '../../../stream/lane-store.js';
import { UsageError } from '../../io.js';
import { executionName } from './execution-name.js';
import { failedFlowError } from './outcomes.js';
import type { Runtime } from './runtime.js';

type Values = Record<string, string | boolean | undefined>;

export const gcHelp = `cutpoint stream gc <stream> --partition P [--grace 10m] [--dry-run]
  collects the lane's trimmed objects and its orphans older than the grace (default
  CUTPOINT_GC_GRACE, else 24h; 30s|10m|6h|2d): marks them, waits for reader leases taken
  before the mark, seals a delete journal, deletes by exact identity; --dry-run lists what
  it would mark and writes nothing; prints the run's totals. One execution takes at most
  CUTPOINT_GC_PAGES pages (default and maximum 200); the run continues in further executions
cutpoint stream leases <stream> --partition P
  the lane's reader leases (object key, expiry)`;

/** Grammar of `stream gc` beyond parseArgs: the grace is checked before anything runs. */
export function checkGc(values: Values): void {
  if (values.grace === undefined) return;
  if (typeof values.grace !== 'string') throw new UsageError('--grace needs a duration (30s, 10m, 6h, 2d)');
  try {
    parseGrace(values.grace);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/**
 * The stream-gc flow on one lane, locally or on AWS (a fresh execution each time: a GC
 * run is not an idempotent command but a fresh scan; every decision is rebuilt from the
 * authority). The grace is resolved here so a local run and the flow agree.
 */
export async function gc(runtime: Runtime, lane: LaneRef, values: Values): Promise<unknown> {
  const graceSeconds = values.grace === undefined ? graceFromEnv(process.env) : parseGrace(values.grace);
  const pagesPerExecution = pagesFromEnv(process.env);
  if (runtime.kind === 'local') await loadHead(await runtime.ports(), lane);
  const input = {
    ...lane,
    grace: `${graceSeconds}s`,
    ...(values['dry-run'] === true ? { dryRun: true } : {}),
    ...(pagesPerExecution ? { pagesPerExecution } : {}),
  };
  const name =
    typeof values.name === 'string'
      ? values.name
      : executionName('gc', lane.stream, lane.partition, randomUUID().slice(0, 8));
  // One execution takes a bounded number of pages and ends with {done: false, next}; its
  // continuations run under deterministic names (a duplicate start is the same execution).
  let output: unknown = await runOnce(runtime, name, input);
  for (let i = 1; (output as { done?: unknown }).done === false; i++)
    output = await runOnce(runtime, executionName('gc-next', name, i), (output as { next: unknown }).next);
  const result = { ...(output as Record<string, unknown>) };
  delete result.next;
  return result;
}

async function runOnce(runtime: Runtime, name: string, input: unknown): Promise<unknown> {
  const run = await runtime.run('stream-gc', name, input);
  if (run.status !== 'SUCCEEDED') throw failedFlowError(run);
  return run.output;
}

export async function leases(runtime: Runtime, lane: LaneRef): Promise<unknown> {
  const ports = await runtime.ports();
  await loadHead(ports, lane);
  return { ...lane, leases: await listLeases(ports, lane) };
}
