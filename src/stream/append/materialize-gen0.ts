import { laneKeys, rangeRootOf, type AppendOutcome, type IndexEntry } from '../../domain/stream.js';
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
 * Append step 5 (KNOWN_COMMITTED): generation 0 of the committed range, through the
 * generation-commit mechanism (write, PREPARED, COMMITTED). The task is deterministic —
 * root from the range, task id from the attempt, the WAL object as the only source — so a
 * failure here is repaired by running the same task again; the primary WAL is never
 * rewritten. The index entry then names the generation as a second, same-view copy.
 */
export async function materializeGen0(input: unknown, ports: Ports): Promise<Gen0Result> {
  const ref = validateAttempt(input);
  const commit = await commitOfAttempt(ports, ref, ref.attemptId);
  const { start, end } = commit;
  const generation = await commitGenerationInProcess(
    {
      root: rangeRootOf(ref, start),
      generation: 0,
      taskId: ref.attemptId,
      sources: [{ key: commit.walKey, sha256: commit.walSha256, size: commit.walSize }],
    },
    ports,
  );
  const outcome: Gen0Result = { status: 'KNOWN_COMMITTED', ...ref, attemptId: ref.attemptId, recordCount: end - start, start, end };
  if (generation.outcome !== 'COMMITTED' || !generation.objectKey || !generation.sha256) return outcome;
  await linkGeneration(ports, indexEntryOf(commit), { objectKey: generation.objectKey, sha256: generation.sha256 });
  return { ...outcome, gen0: { objectKey: generation.objectKey, sha256: generation.sha256 } };
}

/** Adds the committed generation to the range's index entry (creating the entry if the index step failed). */
async function linkGeneration(ports: Ports, entry: IndexEntry, gen0: { objectKey: string; sha256: string }): Promise<void> {
  const current = await putIndexEntry(ports, entry, entry, STREAM_CUT_POINTS.gen0);
  if (current.gen0Key === gen0.objectKey && current.gen0Sha256 === gen0.sha256) return;
  const version = (current as unknown as { version: number }).version;
  await ports.authority.update(STREAM_CUT_POINTS.gen0, laneKeys.index(entry, entry.end), { version }, { gen0Key: gen0.objectKey, gen0Sha256: gen0.sha256 });
  // A CONFLICT or UNKNOWN here only leaves the index without its second copy: reads
  // still have the WAL object, and a later run links the same generation.
}
