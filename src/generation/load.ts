import {
  generationKeys,
  GenerationTaskMissingError,
  type GenerationRecord,
  type GenerationTask,
  type RootHead,
  resolveTask,
} from '../domain/generation.js';
import { ValidationError } from '../domain/errors.js';
import type { AuthorityItem } from '../ports/authority.js';
import type { Ports } from '../ports/index.js';

/** A step's reference to its task (validateRef). */
export interface TaskRef {
  root: string;
  taskId: string;
  generation?: number;
}

/**
 * A task as a step loads it. `cleaned` is set when cleanup (cleanup-task.ts) had already
 * deleted the task item: it deletes only a task whose generation COMMITTED, and the
 * generation record, which stays, names the task, its output and source set. A late worker
 * of the same task (a second execution racing the first, or a recovery run after the first
 * finished) then reloads that winner instead of failing TaskMissing.
 */
export type LoadedTask = GenerationTask & { version: number; cleaned?: GenerationRecord & { version: number } };

/** The durable task with its authority version; a cleaned one from its record; otherwise TaskMissing. */
export async function loadTask(ports: Ports, ref: TaskRef): Promise<LoadedTask> {
  const item = await ports.authority.get(generationKeys.task(ref.root, ref.taskId));
  if (item) return asTask(item);
  if (ref.generation === undefined) throw new GenerationTaskMissingError(ref.root, ref.taskId);
  const record = await loadRecord(ports, ref.root, ref.generation);
  return cleanedTask(ref, record);
}

/** The task its COMMITTED record names (the task item gone by cleanup), or TaskMissing. */
function cleanedTask(ref: TaskRef, record: (GenerationRecord & { version: number }) | undefined): LoadedTask {
  if (record?.state !== 'COMMITTED' || record.taskId !== ref.taskId)
    throw new GenerationTaskMissingError(ref.root, ref.taskId);
  const { root, generation, taskId, objectKey, sourceSetDigest } = record;
  return {
    root,
    generation,
    taskId,
    objectKey,
    sourceSetDigest,
    sources: [],
    state: 'COMMITTED',
    version: 0,
    cleaned: record,
  };
}

export async function loadRecord(
  ports: Ports,
  root: string,
  generation: number,
): Promise<(GenerationRecord & { version: number }) | undefined> {
  const item = await ports.authority.get(generationKeys.record(root, generation));
  return item ? asRecord(item) : undefined;
}

export async function loadRootHead(ports: Ports, root: string): Promise<(RootHead & { version: number }) | undefined> {
  const item = await ports.authority.get(generationKeys.head(root));
  return item ? asHead(item) : undefined;
}

function asHead(item: AuthorityItem): RootHead & { version: number } {
  return item as unknown as RootHead & { version: number };
}

export function asTask(item: AuthorityItem): GenerationTask & { version: number } {
  return item as unknown as GenerationTask & { version: number };
}

export function asRecord(item: AuthorityItem): GenerationRecord & { version: number } {
  return item as unknown as GenerationRecord & { version: number };
}

/**
 * Task, record and head reloaded as one snapshot, and what they prove about the task. A
 * commit moves all three in one transaction; two separate reads could straddle it and see
 * the record COMMITTED with the head still behind (or PREPARED with the head already at it),
 * so a worker racing another on the same task would take a won commit for an inconsistency.
 * `task` is one the caller holds from its own write a moment ago (the in-process
 * mechanism): it names the generation to read; the snapshot re-reads it with the rest.
 * Without it, the reference's generation (the flow's) names it, else one read of the task.
 */
export async function loadResolution(ports: Ports, ref: TaskRef, task?: LoadedTask) {
  const { root, taskId } = ref;
  const generation = task?.generation ?? ref.generation ?? (await loadTask(ports, ref)).generation;
  const [taskItem, recordItem, head] = await ports.authority.getTogether([
    generationKeys.task(root, taskId),
    generationKeys.record(root, generation),
    generationKeys.head(root),
  ]);
  const record = recordItem && asRecord(recordItem);
  const loaded = taskItem ? asTask(taskItem) : cleanedTask({ root, taskId, generation }, record);
  if (loaded.generation !== generation) {
    throw new ValidationError(
      'generation.ref_mismatch',
      `task ${taskId} under ${root} is for generation ${loaded.generation}, not ${generation}`,
    );
  }
  return resolved(loaded, record, head && asHead(head));
}

/** Task, record and head with what they prove (also for state a caller knows from its own applied write). */
export function resolved(
  task: LoadedTask,
  record: (GenerationRecord & { version: number }) | undefined,
  head: (RootHead & { version: number }) | undefined,
) {
  return { task, record, head, resolution: resolveTask(task, record, head) };
}

export type LoadedResolution = ReturnType<typeof resolved>;
