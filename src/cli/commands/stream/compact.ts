import type { LaneRef } from '../../../domain/stream.js';
import { MAX_RANGES_PER_RUN } from '../../../stream/compaction/plan.js';
import { integerIn, type Values } from './options.js';
import { runMaintenanceFlow, MAINTENANCE_FLOW_OPTIONS } from './maintenance-flow.js';
import type { Runtime } from './runtime.js';

export const compactHelp = `cutpoint stream compact <stream> --partition P [--max-ranges N]
  compacts the lane's next run of committed ranges (2 to N, default 16, at most 4 MiB of
  WAL) from its compaction mark into one generation object through the generation-commit
  mechanism (the stream-compact flow); reads then serve the run from it and GC collects
  the superseded WAL objects and generations 0 after the orphan grace. A failed run is
  finished by running it again (same task, same output); prints the run (nothing to
  compact: no \`compacted\`)`;

/** Grammar of `stream compact` beyond parseArgs, checked before anything runs (exit 2). */
export function checkCompact(values: Values): void {
  if (values['max-ranges'] !== undefined) maxRangesOf(values);
}

function maxRangesOf(values: Values): number {
  return integerIn(values, 'max-ranges', 2, MAX_RANGES_PER_RUN);
}

/** The stream-compact flow on one lane, locally or on AWS; prints its output (the run). */
export async function compact(runtime: Runtime, lane: LaneRef, values: Values): Promise<unknown> {
  return runMaintenanceFlow(
    runtime,
    'stream-compact',
    lane,
    values,
    values['max-ranges'] !== undefined ? { maxRanges: maxRangesOf(values) } : {},
  );
}

export const COMPACT_HANDLERS = {
  compact: {
    options: { partition: { type: 'string' }, 'max-ranges': { type: 'string' }, ...MAINTENANCE_FLOW_OPTIONS },
    flow: 'stream-compact',
    check: checkCompact,
    run: (t: Runtime, r: { lane: LaneRef; values: Values }) => compact(t, r.lane, r.values),
  },
} as const;
