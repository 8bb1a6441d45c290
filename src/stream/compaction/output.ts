import { sha256Hex } from '../../domain/digest.js';
import { IdentityConflictError } from '../../domain/errors.js';
import { objectMetadataOf, taskOf, type GenerationTaskSpec } from '../../domain/generation.js';
import { decodeBatch, encodeBatch } from '../../domain/record-batch.js';
import type { CommitRecord } from '../../domain/stream.js';
import { putExact, readVerified } from '../../objects/exact-object.js';
import type { Ports } from '../../ports/index.js';
import { COMPACTION_CUT_POINTS } from './cut-points.js';

/**
 * The compacted output: every record of the run's ranges in offset order, ONE record batch,
 * written under the task's output key with the task's exact metadata (the generation
 * mechanism's write step then finds and reuses it: same key, metadata, full SHA-256).
 * Deterministic from the durable task's sources, each verified by SHA-256 and record
 * count; a lost PUT answer is resolved by exact identity (putExact).
 */
export async function writeCompactedObject(
  ports: Ports,
  spec: GenerationTaskSpec,
  commits: readonly CommitRecord[],
): Promise<{ objectKey: string; sha256: string; size: number; recordCount: number }> {
  const task = taskOf(spec);
  const records: Uint8Array[] = [];
  for (const [i, source] of spec.sources.entries()) {
    const commit = commits[i]!;
    const decoded = decodeBatch((await readVerified(ports.objects, source.key, source.sha256)).bytes);
    if (decoded.length !== commit.end - commit.start) {
      throw new IdentityConflictError(
        'stream.compaction_source_mismatch',
        `${source.key} holds ${decoded.length} records, [${commit.start}, ${commit.end}) needs ${commit.end - commit.start}`,
      );
    }
    records.push(...decoded);
  }
  const bytes = encodeBatch(records);
  const sha256 = sha256Hex(bytes);
  const put = await putExact(ports.objects, COMPACTION_CUT_POINTS.compactObject, task.objectKey, bytes, {
    ...objectMetadataOf(task, sha256),
    sha256,
  });
  return { objectKey: put.key, sha256: put.sha256, size: put.size, recordCount: records.length };
}
