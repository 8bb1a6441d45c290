import {
  generationKeys,
  GenerationTaskMissingError,
  type GenerationRecord,
  type GenerationTask,
  type RootHead,
  resolveTask,
} from '../domain/generation.js';
import type { AuthorityItem } from '../ports/authority.js';
import type { Ports } from '../ports/index.js';

/** The durable task with its authority version, or TaskMissing. */
export async function loadTask(ports: Ports, root: string, taskId: string): Promise<GenerationTask & { version: number }> {
  const item = await ports.authority.get(generationKeys.task(root, taskId));
  if (!item) throw new GenerationTaskMissingError(root, taskId);
  return asTask(item);
}

export async function loadRecord(ports: Ports, root: string, generation: number): Promise<(GenerationRecord & { version: number }) | undefined> {
  const item = await ports.authority.get(generationKeys.record(root, generation));
  return item ? asRecord(item) : undefined;
}

export async function loadHead(ports: Ports, root: string): Promise<(RootHead & { version: number }) | undefined> {
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
 */
export async function loadResolution(ports: Ports, root: string, taskId: string, task?: GenerationTask & { version: number }) {
  const generation = (task ?? (await loadTask(ports, root, taskId))).generation;
  const [taskItem, record, head] = await ports.authority.getTogether([
    generationKeys.task(root, taskId),
    generationKeys.record(root, generation),
    generationKeys.head(root),
  ]);
  if (!taskItem) throw new GenerationTaskMissingError(root, taskId);
  return resolved(asTask(taskItem), record && asRecord(record), head && asHead(head));
}

/** Task, record and head with what they prove (also for state a caller knows from its own applied write). */
export function resolved(task: GenerationTask & { version: number }, record: (GenerationRecord & { version: number }) | undefined, head: (RootHead & { version: number }) | undefined) {
  return { task, record, head, resolution: resolveTask(task, record, head) };
}

export type LoadedResolution = ReturnType<typeof resolved>;
