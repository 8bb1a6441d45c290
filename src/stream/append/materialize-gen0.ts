import {
  laneKeys,
  rangeRootOf,
  type AppendOutcome,
  type CommitRecord,
  type IndexEntry,
  type LaneRef,
} from '../../domain/stream.js';
import { commitGenerationInProcess } from '../../generation/commit-in-process.js';
import type { Ports } from '../../ports/index.js';
import { validateAttempt } from '../append-input.js';
import { STREAM_CUT_POINTS } from '../cut-points.js';
import { indexEntryOf } from '../lane-store.js';
import { commitOfAttempt } from './attempt-evidence.js';
import { putIndexEntry } from './write-index.js';

export interface Gen0Result extends AppendOutcome {
  gen0?: { objectKey: string; sha256: string };
}

/**
 * Generation 0 of one committed attempt's range (stream-resolve-append's repair; the batched
 * run is gen0-batch.ts), off the acknowledged path, through the
 * generation-commit mechanism (write, PREPARED, COMMITTED). The task is deterministic —
 * root from the range, task id from the attempt, the WAL object as the only source — so a
 * failure here is repaired by running the same task again; the primary WAL is never
 * rewritten. The index entry then names the generation as a second, same-view copy.
 */
export async function materializeGen0(input: unknown, ports: Ports): Promise<Gen0Result> {
  const ref = validateAttempt(input);
  const commit = await commitOfAttempt(ports, ref, ref.attemptId);
  const outcome: Gen0Result = {
    status: 'KNOWN_COMMITTED',
    ...ref,
    attemptId: ref.attemptId,
    recordCount: commit.end - commit.start,
    start: commit.start,
    end: commit.end,
  };
  const made = await materializeRange(ports, ref, commit);
  return 'gen0' in made ? { ...outcome, gen0: made.gen0 } : outcome;
}

/**
 * What generation 0 of a range came to: made (and linked), or proven ABORTED — final for the
 * range, since its task is deterministic from it (the abort's reason, e.g. a WAL object that
 * did not verify).
 */
export type RangeGen0 = { gen0: { objectKey: string; sha256: string } } | { aborted: string };

/** Generation 0 of one committed range (deterministic task), linked into its index entry. */
export async function materializeRange(ports: Ports, lane: LaneRef, commit: CommitRecord): Promise<RangeGen0> {
  const generation = await commitGenerationInProcess(
    {
      root: rangeRootOf(lane, commit.start),
      generation: 0,
      taskId: commit.attemptId,
      sources: [{ key: commit.walKey, sha256: commit.walSha256, size: commit.walSize }],
    },
    ports,
  );
  if (generation.outcome === 'ABORTED') return { aborted: generation.reason ?? 'aborted' };
  if (!generation.objectKey || !generation.sha256)
    throw new Error(`bug: generation 0 of ${generation.root} COMMITTED without its object`);
  const gen0 = { objectKey: generation.objectKey, sha256: generation.sha256 };
  await linkGeneration(ports, indexEntryOf(commit), gen0);
  return { gen0 };
}

/**
 * Adds the committed generation to the range's index entry. The commit record doubles as
 * the index entry on the acknowledged path, so the entry is usually absent: it is created
 * already naming the generation (one write); an existing entry gets the generation added.
 */
async function linkGeneration(
  ports: Ports,
  entry: IndexEntry,
  gen0: { objectKey: string; sha256: string },
): Promise<void> {
  const current = await putIndexEntry(
    ports,
    entry,
    { ...entry, gen0Key: gen0.objectKey, gen0Sha256: gen0.sha256 },
    STREAM_CUT_POINTS.gen0,
  );
  if (current.gen0Key === gen0.objectKey && current.gen0Sha256 === gen0.sha256) return;
  const version = (current as unknown as { version: number }).version;
  await ports.authority.update(
    STREAM_CUT_POINTS.gen0,
    laneKeys.index(entry, entry.end),
    { version },
    { gen0Key: gen0.objectKey, gen0Sha256: gen0.sha256 },
  );
  // A CONFLICT or UNKNOWN here only leaves the index without its second copy: reads
  // still have the WAL object, and a later run links the same generation.
}
