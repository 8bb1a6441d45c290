import { describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/domain/digest.js';
import {
  outputKeyOf,
  preparedRecordOf,
  resolveTask,
  sameTaskIdentity,
  sourceSetDigest,
  taskOf,
  validateTaskSpec,
  type GenerationRecord,
  type RootHead,
} from '../../src/domain/generation.js';

const src = (key: string) => ({ key, sha256: sha256Hex(key), size: key.length });
const spec = { root: 'demo/orders', generation: 3, taskId: 't-1', sources: [src('a'), src('b')] };
const task = taskOf(spec);
const prepared: GenerationRecord = preparedRecordOf(task, { sha256: sha256Hex('ab'), size: 2 });
const head = (generation: number, taskId = 'other'): RootHead => ({
  root: spec.root,
  generation,
  taskId,
  objectKey: 'k',
  sha256: sha256Hex('x'),
  size: 1,
});

describe('generation identity', () => {
  it('derives the output key and source digest from identity alone', () => {
    expect(outputKeyOf(spec)).toBe('generations/demo/orders/g0000000003/t-1.bin');
    expect(task.sourceSetDigest).toBe(sourceSetDigest([src('a'), src('b')]));
    expect(sourceSetDigest([src('b'), src('a')])).not.toBe(task.sourceSetDigest);
  });

  it('a task with the same id but another source set is not the same task', () => {
    expect(sameTaskIdentity(task, taskOf({ ...spec }))).toBe(true);
    expect(sameTaskIdentity(task, taskOf({ ...spec, sources: [src('a')] }))).toBe(false);
    expect(sameTaskIdentity(task, taskOf({ ...spec, generation: 4 }))).toBe(false);
  });

  it.each([
    [{ ...spec, root: 'Bad Root' }, 'generation.invalid_root'],
    [{ ...spec, taskId: '' }, 'generation.invalid_task_id'],
    [{ ...spec, generation: -1 }, 'generation.invalid_generation'],
    [{ ...spec, sources: [] }, 'generation.invalid_sources'],
    [{ ...spec, sources: [{ key: 'a', sha256: 'nothex', size: 1 }] }, 'generation.invalid_sources'],
    [null, 'generation.invalid_task'],
  ])('rejects bad input precisely (%#)', (input, code) => {
    expect(() => validateTaskSpec(input)).toThrow(expect.objectContaining({ code }));
  });
});

describe('resolveTask: what the exact record, head and task prove', () => {
  it('no record, head behind: NOT_PREPARED', () => {
    expect(resolveTask(task, undefined, head(2)).state).toBe('NOT_PREPARED');
    expect(resolveTask(task, undefined, undefined).state).toBe('NOT_PREPARED');
  });

  it('our PREPARED record: PREPARED; our COMMITTED record: the exact winner', () => {
    expect(resolveTask(task, prepared, head(2)).state).toBe('PREPARED');
    expect(
      resolveTask({ ...task, state: 'COMMITTED' }, { ...prepared, state: 'COMMITTED' }, head(3, 't-1')).state,
    ).toBe('COMMITTED');
  });

  it('a similar record from another task is not ours: SUPERSEDED, never success', () => {
    const similar = { ...prepared, taskId: 't-2', state: 'COMMITTED' as const };
    expect(resolveTask(task, similar, head(3, 't-2'))).toEqual({
      state: 'SUPERSEDED',
      reason: 'slot taken by task t-2',
    });
  });

  it('head already at or past our generation: SUPERSEDED', () => {
    expect(resolveTask(task, undefined, head(3)).state).toBe('SUPERSEDED');
    expect(resolveTask(task, prepared, head(5)).state).toBe('SUPERSEDED');
  });

  it('an aborted task or record stays aborted', () => {
    expect(resolveTask({ ...task, state: 'ABORTED' }, undefined, undefined).state).toBe('ABORTED');
    expect(resolveTask(task, { ...prepared, state: 'ABORTED' }, undefined).state).toBe('ABORTED');
  });

  it('a COMMITTED record with a head behind it is an inconsistency, not success', () => {
    expect(() => resolveTask(task, { ...prepared, state: 'COMMITTED' }, head(2))).toThrow(
      expect.objectContaining({ name: 'Generation.Inconsistent' }),
    );
  });
});
