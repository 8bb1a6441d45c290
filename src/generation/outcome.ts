import type { GenerationRecord, GenerationTask } from '../domain/generation.js';

/** The JSON projection a generation-commit execution ends with (and the CLI prints). */
export interface GenerationOutcome {
  outcome: 'COMMITTED' | 'ABORTED';
  root: string;
  generation: number;
  taskId: string;
  objectKey?: string;
  sha256?: string;
  size?: number;
  reason?: string;
  /** How this step learned the outcome when it did not apply it itself. */
  resolvedBy?: 'applied' | 'exact-winner-reload' | 'exact-abort-reload';
}

export function committedOutcome(
  record: GenerationRecord,
  resolvedBy: GenerationOutcome['resolvedBy'],
): GenerationOutcome {
  return {
    outcome: 'COMMITTED',
    root: record.root,
    generation: record.generation,
    taskId: record.taskId,
    objectKey: record.objectKey,
    sha256: record.sha256,
    size: record.size,
    resolvedBy,
  };
}

export function abortedOutcome(
  task: GenerationTask,
  reason: string,
  resolvedBy: GenerationOutcome['resolvedBy'],
): GenerationOutcome {
  return { outcome: 'ABORTED', root: task.root, generation: task.generation, taskId: task.taskId, reason, resolvedBy };
}
