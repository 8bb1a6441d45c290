import { IdentityConflictError } from '../domain/errors.js';
import {
  generationKeys,
  sameTaskIdentity,
  taskOf,
  validateTaskSpec,
  type GenerationTask,
  type TaskState,
} from '../domain/generation.js';
import { writeExactlyOnce } from '../authority/resolve.js';
import type { Ports } from '../ports/index.js';
import { GENERATION_CUT_POINTS } from './cut-points.js';
import { asTask, loadRecord } from './load.js';

export interface RegisteredTask {
  root: string;
  generation: number;
  taskId: string;
  objectKey: string;
  sourceSetDigest: string;
  state: TaskState;
}

/**
 * Makes the materialization task durable: the one record every later step and every new
 * worker recomputes from. Registering the exact same task again is a no-op; a different
 * task under the same id is refused — also once a committed task was cleaned up
 * (cleanup-task.ts): its generation record, which stays, still names the task id and its
 * source set. A task its record already names COMMITTED is not written again (the later
 * steps reload the winner from the record). (The in-process callers, generation 0 and compaction, derive the task id from
 * the source set, so they skip that read.)
 */
export async function registerGenerationTask(input: unknown, ports: Ports): Promise<RegisteredTask> {
  const spec = taskOf(validateTaskSpec(input));
  const record = await loadRecord(ports, spec.root, spec.generation);
  if (record?.taskId === spec.taskId && record.sourceSetDigest !== spec.sourceSetDigest) {
    throw new IdentityConflictError(
      'generation.task_identity_conflict',
      `task ${spec.taskId} under ${spec.root} already committed another source set`,
    );
  }
  if (record?.taskId === spec.taskId && record.state === 'COMMITTED') {
    // Committed already, perhaps cleaned: re-creating the task would only be cleaned again.
    const { root, generation, taskId, objectKey, sourceSetDigest } = record;
    return { root, generation, taskId, objectKey, sourceSetDigest, state: 'COMMITTED' };
  }
  const stored = await registerTask(input, ports);
  return {
    root: stored.root,
    generation: stored.generation,
    taskId: stored.taskId,
    objectKey: stored.objectKey,
    sourceSetDigest: stored.sourceSetDigest,
    state: stored.state,
  };
}

/** The registration itself, returning the durable task as stored (with its version). */
export async function registerTask(input: unknown, ports: Ports): Promise<GenerationTask & { version: number }> {
  const task = taskOf(validateTaskSpec(input));
  const key = generationKeys.task(task.root, task.taskId);
  const cut = GENERATION_CUT_POINTS.taskPut;
  const result = await writeExactlyOnce(
    ports.authority,
    cut,
    key,
    () => ports.authority.put(cut, { ...key, ...task, createdAt: ports.clock.now().toISOString() }, 'absent'),
    (item) => sameTaskIdentity(asTask(item), task),
  );
  if (result.status === 'CONFLICT') {
    throw new IdentityConflictError(
      'generation.task_identity_conflict',
      `task ${task.taskId} under ${task.root} already exists with a different generation or source set`,
    );
  }
  return asTask(result.item);
}
