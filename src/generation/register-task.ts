import { IdentityConflictError } from '../domain/errors.js';
import { generationKeys, sameTaskIdentity, taskOf, validateTaskSpec, type TaskState } from '../domain/generation.js';
import { writeExactlyOnce } from '../authority/resolve.js';
import type { Ports } from '../ports/index.js';
import { GENERATION_CUT_POINTS } from './cut-points.js';
import { asTask } from './load.js';

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
 * task under the same id is refused.
 */
export async function registerGenerationTask(input: unknown, ports: Ports): Promise<RegisteredTask> {
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
  const stored = asTask(result.item);
  return {
    root: stored.root,
    generation: stored.generation,
    taskId: stored.taskId,
    objectKey: stored.objectKey,
    sourceSetDigest: stored.sourceSetDigest,
    state: stored.state,
  };
}
