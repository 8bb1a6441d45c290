import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { sha256Hex } from '../../src/domain/digest.js';
import { generationKeys } from '../../src/domain/generation.js';
import { readVerified } from '../../src/objects/exact-object.js';
import type { Ports } from '../../src/ports/index.js';

export interface GenerationCase {
  root: string;
  input: {
    root: string;
    generation: number;
    taskId: string;
    sources: Array<{ key: string; sha256: string; size: number }>;
  };
  expectedBytes: Uint8Array;
}

/** Writes two source objects and returns a task over them, under a fresh root. */
export async function newGenerationCase(
  ports: Ports,
  label: string,
  generation = 0,
  taskId = 'task-1',
): Promise<GenerationCase> {
  const root = `matrix/${label}-${randomUUID().slice(0, 8)}`.toLowerCase();
  const texts = [`first source of ${root}\n`, `second source of ${root}\n`];
  const sources = [];
  for (const [i, text] of texts.entries()) {
    const bytes = new TextEncoder().encode(text);
    const key = `sources/${root}/${i}`;
    const sha256 = sha256Hex(bytes);
    await ports.objects.put('test.source.put', key, bytes, { sha256 });
    sources.push({ key, sha256, size: bytes.byteLength });
  }
  return {
    root,
    input: { root, generation, taskId, sources },
    expectedBytes: new TextEncoder().encode(texts.join('')),
  };
}

/**
 * The generation-commit invariant: exactly one COMMITTED record under the root, by the
 * expected task; the head points at it with the same checksum; the object's bytes read
 * back verified and equal the sources in order; no second generation record exists.
 */
export async function expectExactlyOneCommitted(
  ports: Ports,
  c: GenerationCase,
  taskId = c.input.taskId,
): Promise<void> {
  const records = await ports.authority.query(`gen#${c.root}`, 'record#');
  const committed = records.filter((r) => r.state === 'COMMITTED');
  expect(committed.map((r) => r.taskId)).toEqual([taskId]);
  expect(records.filter((r) => r.taskId === taskId)).toHaveLength(1);
  const record = committed[0]!;
  const head = await ports.authority.get(generationKeys.head(c.root));
  expect(head).toMatchObject({
    generation: record.generation,
    taskId,
    sha256: record.sha256,
    objectKey: record.objectKey,
  });
  const object = await readVerified(ports.objects, record.objectKey as string, record.sha256 as string);
  expect(Buffer.from(object.bytes).equals(Buffer.from(c.expectedBytes))).toBe(true);
  expect(object.metadata.sha256).toBe(record.sha256);
  // The task is COMMITTED, or already cleaned up after its commit (src/generation/cleanup-task.ts).
  const task = await ports.authority.get(generationKeys.task(c.root, taskId));
  if (task) expect(task.state).toBe('COMMITTED');
}

/** A proven abort: the task is ABORTED, its record (if any) is not COMMITTED, and the head does not name it. */
export async function expectProvenAbort(ports: Ports, c: GenerationCase, taskId: string): Promise<void> {
  const task = await ports.authority.get(generationKeys.task(c.root, taskId));
  expect(task?.state).toBe('ABORTED');
  const records = await ports.authority.query(`gen#${c.root}`, 'record#');
  expect(records.filter((r) => r.taskId === taskId && r.state === 'COMMITTED')).toEqual([]);
  const head = await ports.authority.get(generationKeys.head(c.root));
  expect(head?.taskId).not.toBe(taskId);
}
