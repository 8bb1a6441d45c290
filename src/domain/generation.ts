import { canonicalDigest } from './digest.js';
import { CutpointError, ValidationError } from './errors.js';

/**
 * Object generations (docs/rules.md#materialized-generations): a durable task names a
 * root, a generation number and an ordered source set; a worker writes the output
 * object, records a PREPARED generation (invisible to readers), then commits it by CAS
 * or aborts it. One (root, generation) slot holds at most one COMMITTED record, ever.
 */

export interface SourceRef {
  /** Exact object key of a source (a WAL object, an earlier generation). */
  key: string;
  sha256: string;
  size: number;
}

export interface GenerationTaskSpec {
  root: string;
  generation: number;
  taskId: string;
  sources: SourceRef[];
}

export type TaskState = 'OPEN' | 'COMMITTED' | 'ABORTED';
export type RecordState = 'PREPARED' | 'COMMITTED' | 'ABORTED';

/** Stored shape of the durable task (authority item attributes besides pk/sk/version). */
export interface GenerationTask extends GenerationTaskSpec {
  state: TaskState;
  sourceSetDigest: string;
  objectKey: string;
}

/** Stored shape of a generation record. */
export interface GenerationRecord {
  root: string;
  generation: number;
  taskId: string;
  state: RecordState;
  objectKey: string;
  sha256: string;
  size: number;
  sourceSetDigest: string;
}

/** Stored shape of the root head: the one committed generation readers see. */
export interface RootHead {
  root: string;
  generation: number;
  taskId: string;
  objectKey: string;
  sha256: string;
  size: number;
}

const ROOT = /^[a-z0-9][a-z0-9._-]*(\/[a-z0-9][a-z0-9._-]*){0,7}$/;
const TASK_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const SHA256 = /^[0-9a-f]{64}$/;
const KEY = /^[A-Za-z0-9!_.*'()/=-]{1,900}$/;

/** Stable names for Step Functions to match on. */
export class GenerationSlotTakenError extends CutpointError {
  constructor(message: string) {
    super('Generation.SlotTaken', 'generation.slot_taken', message);
  }
}

export class GenerationTaskClosedError extends CutpointError {
  constructor(message: string) {
    super('Generation.TaskClosed', 'generation.task_closed', message);
  }
}

export class GenerationTaskMissingError extends CutpointError {
  constructor(root: string, taskId: string) {
    super('Generation.TaskMissing', 'generation.task_missing', `no durable task ${taskId} under root ${root}`);
  }
}

const GENERATION_RANGE = 'generation must be an integer in [0, 1e9]';

export function validateTaskSpec(input: unknown): GenerationTaskSpec {
  const spec = input as Partial<GenerationTaskSpec> | null;
  if (!spec || typeof spec !== 'object') throw new ValidationError('generation.invalid_task', 'task must be an object');
  const { root, generation, taskId, sources } = spec;
  if (validateRef({ root, taskId, generation }).generation === undefined) {
    throw new ValidationError('generation.invalid_generation', GENERATION_RANGE);
  }
  if (!Array.isArray(sources) || sources.length === 0 || sources.length > 1000) {
    throw new ValidationError(
      'generation.invalid_sources',
      'sources must be a non-empty array of at most 1000 object references',
    );
  }
  for (const source of sources) {
    if (!source || typeof source.key !== 'string' || !KEY.test(source.key)) {
      throw new ValidationError('generation.invalid_sources', 'each source needs a valid object key');
    }
    if (typeof source.sha256 !== 'string' || !SHA256.test(source.sha256)) {
      throw new ValidationError(
        'generation.invalid_sources',
        `source ${source.key}: sha256 must be 64 lower-case hex digits`,
      );
    }
    if (!Number.isInteger(source.size) || source.size < 0) {
      throw new ValidationError(
        'generation.invalid_sources',
        `source ${source.key}: size must be a non-negative integer`,
      );
    }
  }
  return {
    root: root as string,
    generation: generation as number,
    taskId: taskId as string,
    sources: sources.map(({ key, sha256, size }) => ({ key, sha256, size })),
  };
}

/**
 * Validates the (root, taskId) pair every later step is addressed by. `generation`, where the caller knows it (the flow carries
 * it from its input), lets a step find a task that cleanup already deleted through the
 * generation record that stays (load.ts).
 */
export function validateRef(input: unknown): { root: string; taskId: string; generation?: number } {
  const ref = input as { root?: unknown; taskId?: unknown; generation?: unknown } | null;
  if (typeof ref?.root !== 'string' || !ROOT.test(ref.root)) {
    throw new ValidationError('generation.invalid_root', 'root must be lower-case path segments of [a-z0-9._-]');
  }
  if (typeof ref.taskId !== 'string' || !TASK_ID.test(ref.taskId)) {
    throw new ValidationError('generation.invalid_task_id', 'taskId must be 1-128 characters of [A-Za-z0-9._-]');
  }
  if (ref.generation === undefined) return { root: ref.root, taskId: ref.taskId };
  if (!Number.isInteger(ref.generation) || (ref.generation as number) < 0 || (ref.generation as number) > 1e9) {
    throw new ValidationError('generation.invalid_generation', GENERATION_RANGE);
  }
  return { root: ref.root, taskId: ref.taskId, generation: ref.generation as number };
}

/** Authority keys: one partition per root. */
export const generationKeys = {
  task: (root: string, taskId: string) => ({ pk: `gen#${root}`, sk: `task#${taskId}` }),
  record: (root: string, generation: number) => ({
    pk: `gen#${root}`,
    sk: `record#${String(generation).padStart(10, '0')}`,
  }),
  head: (root: string) => ({ pk: `gen#${root}`, sk: 'head' }),
};

/** The output key is derived from identity, so every retry and every new worker reuses it. */
export function outputKeyOf(spec: Pick<GenerationTaskSpec, 'root' | 'generation' | 'taskId'>): string {
  return `generations/${spec.root}/g${String(spec.generation).padStart(10, '0')}/${spec.taskId}.bin`;
}

export function sourceSetDigest(sources: readonly SourceRef[]): string {
  return canonicalDigest(sources.map(({ key, sha256, size }) => ({ key, sha256, size })));
}

/** The durable task a spec defines. */
export function taskOf(spec: GenerationTaskSpec): GenerationTask {
  return { ...spec, state: 'OPEN', sourceSetDigest: sourceSetDigest(spec.sources), objectKey: outputKeyOf(spec) };
}

/** "A similar task exists" is not evidence: the whole identity must match. */
export function sameTaskIdentity(a: GenerationTask, b: GenerationTask): boolean {
  return (
    a.root === b.root &&
    a.generation === b.generation &&
    a.taskId === b.taskId &&
    a.sourceSetDigest === b.sourceSetDigest &&
    a.objectKey === b.objectKey
  );
}

/** Object metadata that names the exact identity that wrote the bytes. */
export function objectMetadataOf(task: GenerationTask, sha256: string): Record<string, string> {
  return {
    sha256,
    root: task.root,
    generation: String(task.generation),
    'task-id': task.taskId,
    'source-digest': task.sourceSetDigest,
  };
}

/** True when stored metadata names exactly this task and checksum. */
export function metadataMatches(metadata: Record<string, string>, task: GenerationTask, sha256?: string): boolean {
  const expected = objectMetadataOf(task, sha256 ?? metadata.sha256 ?? '');
  return Object.entries(expected).every(([k, v]) => metadata[k] === v);
}

/** The record a task's PREPARED step writes. */
export function preparedRecordOf(task: GenerationTask, object: { sha256: string; size: number }): GenerationRecord {
  return {
    root: task.root,
    generation: task.generation,
    taskId: task.taskId,
    state: 'PREPARED',
    objectKey: task.objectKey,
    sha256: object.sha256,
    size: object.size,
    sourceSetDigest: task.sourceSetDigest,
  };
}

/** A record belongs to this task only if every identity field matches. */
export function recordIsOurs(record: GenerationRecord, task: GenerationTask): boolean {
  return (
    record.root === task.root &&
    record.generation === task.generation &&
    record.taskId === task.taskId &&
    record.objectKey === task.objectKey &&
    record.sourceSetDigest === task.sourceSetDigest
  );
}

/**
 * What reloading the exact record and head proves about a task (the probe after an
 * UNKNOWN commit, and the first thing every retried step does).
 */
export type Resolution =
  | { state: 'COMMITTED'; record: GenerationRecord }
  | { state: 'PREPARED'; record: GenerationRecord }
  | { state: 'NOT_PREPARED' }
  | { state: 'ABORTED'; reason: string }
  | { state: 'SUPERSEDED'; reason: string };

export function resolveTask(
  task: GenerationTask,
  record: GenerationRecord | undefined,
  head: RootHead | undefined,
): Resolution {
  if (record && recordIsOurs(record, task)) {
    if (record.state === 'COMMITTED') {
      // The head must agree: a COMMITTED record whose head names someone else is an
      // authority inconsistency, never silently success.
      if (!head || head.generation < task.generation) {
        throw new CutpointError(
          'Generation.Inconsistent',
          'generation.head_behind_commit',
          `record ${task.root}@${task.generation} is COMMITTED but the head is behind it`,
        );
      }
      return { state: 'COMMITTED', record };
    }
    if (record.state === 'ABORTED') return { state: 'ABORTED', reason: 'record aborted' };
    if (task.state === 'ABORTED') return { state: 'ABORTED', reason: 'task aborted' };
    if (head && head.generation >= task.generation) {
      return { state: 'SUPERSEDED', reason: `head is already at generation ${head.generation}` };
    }
    return { state: 'PREPARED', record };
  }
  if (task.state === 'ABORTED') return { state: 'ABORTED', reason: 'task aborted' };
  if (record) return { state: 'SUPERSEDED', reason: `slot taken by task ${record.taskId}` };
  if (head && head.generation >= task.generation) {
    return { state: 'SUPERSEDED', reason: `head is already at generation ${head.generation}` };
  }
  return { state: 'NOT_PREPARED' };
}
