import type { AppendOutcome, LaneRef } from '../../../domain/stream.js';
import { CutpointError } from '../../../domain/errors.js';
import { validateWriterId } from '../../../stream/append/writer-slot.js';
import { progress, UsageError } from '../../io.js';
import { executionName } from './execution-name.js';
import { attemptOf, type Values } from './options.js';
import { failedFlowError, isRejection } from './outcomes.js';
import { freshNameHint, type Runtime } from './runtime.js';

/**
 * `cutpoint stream resolve`: the stream-resolve-append flow for one attempt (`--attempt`) or
 * for every attempt of a LaneWriter that died holding the lane (`--writer`).
 */

/** Exactly one of --attempt (one attempt) and --writer (every attempt of a LaneWriter). */
export function checkResolve(values: Values): void {
  if (values.writer === undefined) return void attemptOf(values);
  if (values.attempt !== undefined)
    throw new UsageError(
      '--attempt and --writer cannot be combined: resolve one attempt, or every attempt of one writer',
    );
  writerOf(values);
}

/** One attempt: KNOWN_COMMITTED, or KNOWN_NOT_COMMITTED (its records may be appended again). */
export async function resolveAttemptCommand(runtime: Runtime, lane: LaneRef, values: Values): Promise<unknown> {
  const attemptId = attemptOf(values);
  const outcome = (await runResolve(
    runtime,
    lane,
    { attemptId },
    'the lane stays suspended; see the execution history',
  )) as AppendOutcome;
  if (outcome.status === 'KNOWN_NOT_COMMITTED')
    progress(
      `attempt ${attemptId} did not commit (${outcome.reason ?? 'aborted'}); append its records again with a new --attempt`,
    );
  else if (outcome.status !== 'KNOWN_COMMITTED') {
    throw new CutpointError(
      'Stream.UnexpectedOutcome',
      'stream.unexpected_outcome',
      `resolve of attempt ${attemptId} ended ${String(outcome.status)}`,
    );
  }
  return outcome;
}

/** Every attempt of a writer, each outcome printed; the slot released. */
export async function resolveWriterCommand(runtime: Runtime, lane: LaneRef, values: Values): Promise<unknown> {
  const writerId = writerOf(values);
  const outcome = (await runResolve(
    runtime,
    lane,
    { writerId },
    `the lane stays held by writer ${writerId}; run this again`,
  )) as {
    attempts?: AppendOutcome[];
  };
  const lost = (outcome.attempts ?? []).filter((a) => a.status === 'KNOWN_NOT_COMMITTED');
  if (lost.length > 0)
    progress(
      `${lost.length} attempt(s) of writer ${writerId} did not commit (${lost.map((a) => a.attemptId).join(', ')}); append their records again`,
    );
  return outcome;
}

/** The flow under a deterministic name; a failure names what stays held (unless the input was refused). */
async function runResolve(
  runtime: Runtime,
  lane: LaneRef,
  of: { attemptId: string } | { writerId: string },
  held: string,
): Promise<unknown> {
  const [kind, id] = 'attemptId' in of ? ['resolve', of.attemptId] : ['resolve-writer', of.writerId];
  const run = await runtime.run('stream-resolve-append', executionName(kind, lane.stream, lane.partition, id), {
    ...lane,
    ...of,
  });
  if (run.status !== 'SUCCEEDED') {
    throw failedFlowError(
      run,
      [isRejection(run) ? undefined : held, freshNameHint(runtime)].filter(Boolean).join('; '),
    );
  }
  return run.output;
}

function writerOf(values: Values): string {
  if (typeof values.writer !== 'string') throw new UsageError('--writer WRITER is required');
  return validateWriterId(values.writer);
}
