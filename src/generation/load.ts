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
  return item ? (item as unknown as RootHead & { version: number }) : undefined;
}

export function asTask(item: AuthorityItem): GenerationTask & { version: number } {
  return item as unknown as GenerationTask & { version: number };
}

export function asRecord(item: AuthorityItem): GenerationRecord & { version: number } {
  return item as unknown as GenerationRecord & { version: number };
}

/**
 * Task, record and head reloaded together, and what they prove about the task. `task` is
 * one the caller holds from its own write a moment ago (the in-process mechanism): its
 * version is checked by the transaction that acts on it, so a stale one only costs a reload.
 */
export async function loadResolution(ports: Ports, root: string, taskId: string, task?: GenerationTask & { version: number }) {
  task ??= await loadTask(ports, root, taskId);
  const [record, head] = await Promise.all([loadRecord(ports, root, task.generation), loadHead(ports, root)]);
  return resolved(task, record, head);
}

/** Task, record and head with what they prove (also for state a caller knows from its own applied write). */
export function resolved(task: GenerationTask & { version: number }, record: (GenerationRecord & { version: number }) | undefined, head: (RootHead & { version: number }) | undefined) {
  return { task, record, head, resolution: resolveTask(task, record, head) };
}

export type LoadedResolution = ReturnType<typeof resolved>;
