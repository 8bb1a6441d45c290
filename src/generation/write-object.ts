import { sha256Hex } from '../domain/digest.js';
import { IdentityConflictError } from '../domain/errors.js';
import { GenerationTaskClosedError, metadataMatches, objectMetadataOf, validateRef } from '../domain/generation.js';
import { copyExact, putExact, readVerified } from '../objects/exact-object.js';
import type { Ports } from '../ports/index.js';
import { GENERATION_CUT_POINTS } from './cut-points.js';
import { loadTask, type LoadedTask } from './load.js';
import { materialize } from './materialize.js';

export interface WrittenObject {
  objectKey: string;
  sha256: string;
  size: number;
  reused: boolean;
}

/**
 * Writes the task's output object under its identity-derived key. A retried step, or a
 * new worker after a crash, first looks for the exact output (same key, metadata naming
 * this task and source set, bytes matching their SHA-256) and reuses it.
 *
 * A task with one source (a stream range's generation 0) has that source's bytes as its
 * output: the store copies them server-side (`generation.object.copy`) instead of the
 * worker reading and re-writing them. For an OPEN task the create-only copy is itself the
 * look for the output (S3 refuses a taken key with 412, resolved by the exact reload in
 * `copyExact`; were a store not to enforce it, a retry would copy the same immutable source
 * under the same identity again — the output is deterministic and not yet visible). A
 * COMMITTED task's output is never copied over: it is looked for first. The copy is not
 * read back here: its bytes are invisible until the commit, which verifies the full
 * SHA-256 (the source's recorded one) and the metadata before COMMITTED. `task` is the durable task a caller in the same
 * process just registered (the in-process mechanism); a stale one is harmless — the
 * PREPARED step's transaction checks the task's version.
 */
export async function writeGenerationObject(input: unknown, ports: Ports, task?: LoadedTask): Promise<WrittenObject> {
  const { root, taskId, generation } = validateRef(input);
  task ??= await loadTask(ports, { root, taskId, generation });
  if (task.cleaned)
    return { objectKey: task.cleaned.objectKey, sha256: task.cleaned.sha256, size: task.cleaned.size, reused: true };
  if (task.state === 'ABORTED') throw new GenerationTaskClosedError(`task ${taskId} under ${root} is aborted`);

  const [source, ...more] = task.sources;
  const single = source !== undefined && more.length === 0;
  if (!single || task.state !== 'OPEN') {
    const existing = await ports.objects.get(task.objectKey);
    if (existing) {
      const sha256 = existing.metadata.sha256 ?? '';
      if (!metadataMatches(existing.metadata, task) || sha256Hex(existing.bytes) !== sha256) {
        throw new IdentityConflictError(
          'generation.object_identity_conflict',
          `object ${task.objectKey} is not this task's exact output`,
        );
      }
      return { objectKey: task.objectKey, sha256, size: existing.size, reused: true };
    }
  }

  if (single) {
    const copied = await copyExact(ports.objects, GENERATION_CUT_POINTS.objectCopy, source, task.objectKey, {
      ...objectMetadataOf(task, source.sha256),
      sha256: source.sha256,
    });
    return { objectKey: copied.key, sha256: copied.sha256, size: copied.size, reused: copied.status === 'REUSED' };
  }

  const sources = [];
  for (const source of task.sources) sources.push((await readVerified(ports.objects, source.key, source.sha256)).bytes);
  const bytes = materialize(sources);
  const sha256 = sha256Hex(bytes);
  const put = await putExact(ports.objects, GENERATION_CUT_POINTS.objectPut, task.objectKey, bytes, {
    ...objectMetadataOf(task, sha256),
    sha256,
  });
  return { objectKey: put.key, sha256: put.sha256, size: put.size, reused: put.status === 'REUSED' };
}
