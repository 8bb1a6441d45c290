import { randomUUID } from 'node:crypto';
import type { LaneRef } from '../../../domain/stream.js';
import { executionName } from './execution-name.js';
import type { Values } from './options.js';
import { failedFlowError } from './outcomes.js';
import type { Runtime } from './runtime.js';

/** --aws options of a maintenance verb (the deployed state machine, an execution name). */
export const MAINTENANCE_FLOW_OPTIONS = { 'state-machine-arn': { type: 'string' }, name: { type: 'string' } } as const;

/**
 * Runs one lane-maintenance flow (stream-materialize, stream-compact) locally or on AWS and
 * returns its output. Each run is a fresh look at the lane, as for `stream gc`: its work is
 * idempotent by exact identity (the same deterministic task and output for the same
 * ranges), so a new execution never repeats an effect, and a fixed name would make a
 * re-run after a failure find the failed execution instead of finishing the task.
 * `--name` gives the execution the caller's name (a re-run with it finds that execution).
 */
export async function runMaintenanceFlow(
  runtime: Runtime,
  flow: 'stream-materialize' | 'stream-compact',
  lane: LaneRef,
  values: Values,
  knobs: Record<string, number>,
): Promise<unknown> {
  const verb = flow === 'stream-compact' ? 'compact' : 'materialize';
  const name =
    typeof values.name === 'string'
      ? values.name
      : executionName(verb, lane.stream, lane.partition, randomUUID().slice(0, 8));
  const run = await runtime.run(flow, name, { ...lane, ...knobs });
  if (run.status !== 'SUCCEEDED') throw failedFlowError(run);
  return run.output;
}
