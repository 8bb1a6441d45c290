import { generationKeys, metadataMatches, validateRef } from '../domain/generation.js';
import { CutpointError, ValidationError } from '../domain/errors.js';
import { readVerified } from '../objects/exact-object.js';
import type { AuthorityItem, ItemKey } from '../ports/authority.js';
import type { Ports } from '../ports/index.js';
import { GENERATION_CUT_POINTS } from './cut-points.js';
import { asRecord, asTask } from './load.js';

/** Where the flow that ran the task records that it moved past it, judged; a refusal when it did not. */
export type CheckpointCheck = () => Promise<string | undefined>;

/**
 * What must not be protecting or collecting the output beyond the generation itself (a
 * stream output's GC lifecycle root): items read in the task's snapshot, judged. A refusal
 * keeps the task. `collected`: the output's bytes may be gone by rule (collected, or
 * collectible and its root retired) — absent is then no failed check; present, it must
 * still be exactly the record's.
 */
export interface Protections {
  keys: ItemKey[];
  judge(items: Array<AuthorityItem | undefined>): { refused?: string; collected?: boolean };
}

export interface TaskCleanupPlan {
  root: string;
  generation: number;
  taskId: string;
  /** The identity the caller's own record names (a compaction's `compaction#`): every given field must match the record. */
  expected?: { objectKey?: string; sha256?: string; sourceSetDigest?: string };
  checkpoint: CheckpointCheck;
  protections?: Protections;
  /** `bytes`: the output read whole against its SHA-256; `identity`: its HEAD (size, SHA-256, the task's metadata). */
  output: 'bytes' | 'identity';
}

/** `aborted`: the task is ABORTED — the proof of its abort, never cleaned (not a failed check). */
export type TaskCleanup = { cleaned: true } | { cleaned: false; refused: string; aborted?: true };

/**
 * Task cleanup, task-first and plan-second (docs/stream-log.md "The generation-commit flow", task
 * cleanup), the one cleanup of every task kind (the commit-generation flow, a stream
 * range's generation 0, a compaction). The task item is the generation mechanism's
 * workflow metadata; it is deleted only after, read as one snapshot with it:
 * - the generation: the record COMMITTED by exactly this task (output key, source-set
 *   digest; and whatever the caller's own record names);
 * - its output root: the root head at this generation (by this task) or past it;
 * - the output object: exactly the record's (its HEAD's size, SHA-256 and task metadata,
 *   and with `bytes` its bytes against the full SHA-256); absent only where the protections
 *   say it may be gone by rule (collected by GC);
 * - the checkpoint: the flow's own record that it moved past the task;
 * - the protections: nothing that keeps or distrusts the output (quarantine, a collection
 *   in flight) stands.
 * Then the task is deleted by a conditional delete at the version verified (`cut`; a lost
 * answer is resolved by reloading it). Any check that fails refuses and keeps the task.
 * The plan — what lets a run find the task again (the caller's mark, its records) — is
 * advanced or removed only after (plan-second), so a failed cleanup is found again. The
 * generation record and root head are the committed generation itself and stay.
 */
export async function cleanupGenerationTask(ports: Ports, cut: string, plan: TaskCleanupPlan): Promise<TaskCleanup> {
  const taskKey = generationKeys.task(plan.root, plan.taskId);
  const protectionKeys = plan.protections?.keys ?? [];
  const [taskItem, recordItem, head, ...protecting] = await ports.authority.getTogether([
    taskKey,
    generationKeys.record(plan.root, plan.generation),
    generationKeys.head(plan.root),
    ...protectionKeys,
  ]);
  if (!taskItem) return { cleaned: true };
  const task = asTask(taskItem);
  const record = recordItem && asRecord(recordItem);
  const refuse = (refused: string): TaskCleanup => ({ cleaned: false, refused });
  if (task.state === 'ABORTED')
    return { cleaned: false, refused: `task ${plan.taskId} is ABORTED: the proof of its abort stays`, aborted: true };
  if (task.generation !== plan.generation) return refuse(`task ${plan.taskId} names generation ${task.generation}`);
  const e = plan.expected ?? {};
  const committed =
    record?.state === 'COMMITTED' &&
    record.taskId === plan.taskId &&
    record.objectKey === task.objectKey &&
    record.sourceSetDigest === task.sourceSetDigest &&
    (e.objectKey ?? record.objectKey) === record.objectKey &&
    (e.sha256 ?? record.sha256) === record.sha256 &&
    (e.sourceSetDigest ?? record.sourceSetDigest) === record.sourceSetDigest;
  if (!committed)
    return refuse(
      `generation ${plan.generation} of ${plan.root} is not COMMITTED by task ${plan.taskId} with its output`,
    );
  const at = typeof head?.generation === 'number' ? head.generation : -1;
  if (at < plan.generation || (at === plan.generation && head?.taskId !== plan.taskId))
    return refuse(`the head of ${plan.root} is not at generation ${plan.generation} or past it`);
  const protection = plan.protections?.judge(protecting) ?? {};
  if (protection.refused) return refuse(protection.refused);
  const checkpoint = await plan.checkpoint();
  if (checkpoint) return refuse(checkpoint);
  const output = await outputRefusal(ports, plan.output, task, record, protection.collected === true);
  if (output) return refuse(output);
  const deleted = await ports.authority.delete(cut, taskKey, { version: task.version });
  if (deleted.status === 'APPLIED') return { cleaned: true };
  // CONFLICT or UNKNOWN: gone now is done; still there (moved) is left for the next run.
  return (await ports.authority.get(taskKey))
    ? refuse(`task ${plan.taskId} moved during its cleanup`)
    : { cleaned: true };
}

/** The output object is exactly the record's (or gone, where it may be gone by rule), or why not. */
async function outputRefusal(
  ports: Ports,
  check: 'bytes' | 'identity',
  task: ReturnType<typeof asTask>,
  record: ReturnType<typeof asRecord>,
  mayBeGone: boolean,
): Promise<string | undefined> {
  const head = await ports.objects.head(record.objectKey);
  if (!head && mayBeGone) return undefined;
  if (!head || head.size !== record.size || !metadataMatches(head.metadata, task, record.sha256))
    return `output ${record.objectKey} is not the committed generation's object`;
  if (check === 'identity') return undefined;
  try {
    await readVerified(ports.objects, record.objectKey, record.sha256);
    return undefined;
  } catch (error) {
    if (error instanceof CutpointError) return `output ${record.objectKey} does not verify (${error.code})`;
    throw error;
  }
}

/**
 * The commit-generation flow's CleanupTask step, after Committed: the generation's commit is
 * the flow's own checkpoint (verified above: the record COMMITTED, the head at it or past
 * it); a generic root has no GC lifecycle, so no protections beyond it. A refusal keeps the
 * task and the flow still ends Committed, with the reason (`taskCleaned: false`).
 */
export async function cleanupCommittedTask(
  input: unknown,
  ports: Ports,
): Promise<{ taskCleaned: boolean; refused?: string }> {
  const { root, taskId } = validateRef(input);
  const generation = (input as { generation?: unknown }).generation;
  if (!Number.isSafeInteger(generation) || (generation as number) < 0)
    throw new ValidationError('generation.invalid_generation', 'generation must be a non-negative integer');
  const result = await cleanupGenerationTask(ports, GENERATION_CUT_POINTS.taskCleanup, {
    root,
    generation: generation as number,
    taskId,
    checkpoint: async () => undefined,
    output: 'bytes',
  });
  return result.cleaned ? { taskCleaned: true } : { taskCleaned: false, refused: result.refused };
}
