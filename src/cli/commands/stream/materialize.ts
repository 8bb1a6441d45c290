import type { LaneRef } from '../../../domain/stream.js';
import { MAX_MATERIALIZE } from '../../../stream/append/gen0-batch.js';
import { integerIn, type Values } from './options.js';
import { runMaintenanceFlow, MAINTENANCE_FLOW_OPTIONS } from './maintenance-flow.js';
import type { Runtime } from './runtime.js';

export const materializeHelp = `cutpoint stream materialize <stream> --partition P [--max N]
  materializes generation 0 of the next N committed ranges (default 32) from the lane's
  mark, off the append's acknowledged path (the stream-materialize flow); a range that
  fails stops the run there and the next run resumes at it (reads never wait for it: the
  WAL object serves the range)`;

function maxOf(values: Values): number {
  return integerIn(values, 'max', 1, MAX_MATERIALIZE);
}

/** Grammar of `stream materialize` beyond parseArgs, checked before anything runs (exit 2). */
export function checkMaterialize(values: Values): void {
  if (values.max !== undefined) maxOf(values);
}

/** The stream-materialize flow on one lane, locally or on AWS; prints its output (the batch). */
export async function materializeLane(runtime: Runtime, lane: LaneRef, values: Values): Promise<unknown> {
  return runMaintenanceFlow(
    runtime,
    'stream-materialize',
    lane,
    values,
    values.max !== undefined ? { max: maxOf(values) } : {},
  );
}

export const MATERIALIZE_HANDLERS = {
  materialize: {
    options: { partition: { type: 'string' }, max: { type: 'string' }, ...MAINTENANCE_FLOW_OPTIONS },
    flow: 'stream-materialize',
    check: checkMaterialize,
    run: (t: Runtime, r: { lane: LaneRef; values: Values }) => materializeLane(t, r.lane, r.values),
  },
} as const;
