import { CutpointError } from '../../../domain/errors.js';
import type { LaneRef } from '../../../domain/stream.js';
import { validateAttemptPrefix } from '../../../stream/producer/attempt-ids.js';
import { validateKnobs } from '../../../stream/producer/knobs.js';
import { UsageError } from '../../io.js';
import { activeSession } from '../../session-store.js';
import { appendFile, type FileAppendSummary } from './append-file.js';
import { integer } from './options.js';
import type { Runtime } from './runtime.js';

type Values = Record<string, string | boolean | undefined>;

/** The options `stream append --from` adds (parseArgs). */
export const FILE_APPEND_OPTIONS = {
  from: { type: 'string' },
  'max-records': { type: 'string' },
  'max-bytes': { type: 'string' },
} as const;

/**
 * Grammar of `--from` and the knobs' values and ranges (exit 2; a range names the
 * producer's code), then the attempt as a group prefix (exit 1, its stable code), before
 * anything is touched.
 */
export function checkFileAppend(values: Values, attempt: string): void {
  if (typeof values.from !== 'string' || values.from === '') throw new UsageError('--from needs a FILE.jsonl');
  for (const name of ['file', 'input-format', 'state-machine-arn', 'name']) {
    if (values[name] !== undefined) throw new UsageError(`--from FILE.jsonl cannot be combined with --${name}`);
  }
  const knobs = knobsOf(values);
  try {
    validateKnobs(knobs);
  } catch (error) {
    if (error instanceof CutpointError)
      throw new UsageError(`--max-records/--max-bytes: ${error.code}: ${error.message}`);
    throw error;
  }
  validateAttemptPrefix(attempt);
}

function knobsOf(values: Values): { maxRecords?: number; maxBytes?: number } {
  const knobs: { maxRecords?: number; maxBytes?: number } = {};
  for (const [flag, knob] of [
    ['max-records', 'maxRecords'],
    ['max-bytes', 'maxBytes'],
  ] as const) {
    if (values[flag] !== undefined) knobs[knob] = integer(values, flag);
  }
  return knobs;
}

/**
 * `stream append --from FILE.jsonl`: the lane's stored owner session (like `stream append`),
 * the producer in this process on the runtime's ports (locally with `--faults` armed;
 * with `--aws`, the deployed table and bucket).
 */
export async function appendFromFile(
  runtime: Runtime,
  lane: LaneRef,
  values: Values,
  attempt: string,
): Promise<FileAppendSummary> {
  const fence = await activeSession(lane, runtime.kind);
  return appendFile(await runtime.ports(), lane, fence, values.from as string, {
    attempt,
    ...knobsOf(values),
    aws: runtime.kind === 'aws',
  });
}
