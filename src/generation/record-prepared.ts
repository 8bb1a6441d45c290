import { IdentityConflictError, OutcomeUnknownError, ValidationError } from '../domain/errors.js';
import {
  generationKeys,
  GenerationSlotTakenError,
  GenerationTaskClosedError,
  preparedRecordOf,
  validateRef,
  type GenerationTask,
} from '../domain/generation.js';
import type { Ports } from '../ports/index.js';
import { GENERATION_CUT_POINTS } from './cut-points.js';
import { loadResolution, resolved, type LoadedResolution } from './load.js';

export interface PreparedGeneration {
  state: 'PREPARED' | 'COMMITTED';
  generation: number;
  reused: boolean;
}

const MAX_ROUNDS = 3;

/**
 * Records a PREPARED generation (invisible to readers) for the task's verified output.
 * The record is created only while the task is still OPEN (a transaction checks the
 * task's version), so a late worker cannot prepare an aborted task.
 */
export async function recordPreparedGeneration(input: unknown, ports: Ports): Promise<PreparedGeneration> {
  return (await prepareGeneration(input, ports)).prepared;
}

/**
 * The step itself. `known` is the task as the caller registered it a moment ago (the
 * in-process mechanism; its version is checked by the transaction). `loaded` is what this
 * step's own applied transaction proves (task, the new record at version 1, the head it
 * saw): the commit acts on it without reloading, and its transaction checks every version.
 */
export async function prepareGeneration(
  input: unknown,
  ports: Ports,
  known?: GenerationTask & { version: number },
): Promise<{ prepared: PreparedGeneration; loaded?: LoadedResolution }> {
  const ref = validateRef(input);
  const { root, taskId } = ref;
  const object = validateObject(input);
  const cut = GENERATION_CUT_POINTS.recordPut;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const { task, record, head, resolution } = await loadResolution(ports, ref, round === 0 ? known : undefined);
    if (object.objectKey !== task.objectKey) {
      throw new ValidationError(
        'generation.object_key_mismatch',
        `object key is not the task's output key ${task.objectKey}`,
      );
    }
    switch (resolution.state) {
      case 'COMMITTED':
      case 'PREPARED':
        if (record?.sha256 !== object.sha256 || record.size !== object.size) {
          throw new IdentityConflictError(
            'generation.record_identity_conflict',
            `generation ${task.generation} of ${root} records a different checksum`,
          );
        }
        return { prepared: { state: resolution.state, generation: task.generation, reused: true } };
      case 'ABORTED':
        throw new GenerationTaskClosedError(`task ${taskId} under ${root} is aborted`);
      case 'SUPERSEDED':
        throw new GenerationSlotTakenError(`generation ${task.generation} of ${root}: ${resolution.reason}`);
      case 'NOT_PREPARED': {
        const key = generationKeys.record(root, task.generation);
        const item = { ...key, ...preparedRecordOf(task, object), preparedAt: ports.clock.now().toISOString() };
        const outcome = await ports.authority.transact(cut, [
          { kind: 'check', key: generationKeys.task(root, taskId), expect: { version: task.version } },
          { kind: 'put', item, expect: 'absent' },
        ]);
        if (outcome.status === 'APPLIED') {
          return {
            prepared: { state: 'PREPARED', generation: task.generation, reused: false },
            loaded: resolved(task, { ...item, version: 1 }, head),
          };
        }
        // UNKNOWN or CONFLICT: the next round reloads the exact record and decides.
        continue;
      }
    }
  }
  throw new OutcomeUnknownError(cut, `${cut}: generation record for task ${taskId} did not settle`);
}

function validateObject(input: unknown): { objectKey: string; sha256: string; size: number } {
  const o = input as { objectKey?: unknown; sha256?: unknown; size?: unknown };
  if (
    typeof o.objectKey !== 'string' ||
    typeof o.sha256 !== 'string' ||
    !/^[0-9a-f]{64}$/.test(o.sha256) ||
    !Number.isInteger(o.size)
  ) {
    throw new ValidationError('generation.invalid_object', 'objectKey, sha256 (64 hex) and size are required');
  }
  return { objectKey: o.objectKey, sha256: o.sha256, size: o.size as number };
}
