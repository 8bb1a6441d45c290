import { describe, expect, it } from 'vitest';
import { encodeChunk } from '../../src/delivery/chunk-codec.js';
import { positionAfter } from '../../src/delivery/parts/resume.js';
import type { TargetRow } from '../../src/domain/delivery/target-types.js';

// The resume position from a part's chunks (newest first), pure: the part-step tests cover
// reading them from their objects.
const columns = ['t', 'k', 'v'];
const order = { timeColumn: 't', keyColumns: ['k'] };
const linesOf = (rows: TargetRow[]): string[] =>
  Buffer.from(encodeChunk(rows, columns)).toString('utf8').slice(0, -1).split('\n');
const row = (t: string, k: unknown, v: string): TargetRow => ({ t, k, v });

async function* newestFirst(chunks: string[][], pulled: number[]): AsyncGenerator<string[]> {
  for (const [i, lines] of chunks.entries()) {
    pulled.push(i);
    yield lines;
  }
}

describe('positionAfter: where a part resumes', () => {
  it('is the last row key with the rows tied on it at the chunk end; older chunks are not read', async () => {
    const pulled: number[] = [];
    const chunks = [linesOf([row('a', 1, 'x'), row('b', 2, 'y'), row('b', 2, 'z')]), linesOf([row('a', 0, 'w')])];
    expect(await positionAfter(newestFirst(chunks, pulled), order)).toEqual({ lastKey: ['b', 2], rowsAtLastKey: 2 });
    expect(pulled).toEqual([0]);
  });

  it('counts a tie group back across chunks while a whole chunk is tied, and stops at its start', async () => {
    const pulled: number[] = [];
    const tied = (v: string) => row('c', { x: 1, y: 2 }, v);
    const chunks = [
      linesOf([tied('p'), tied('q')]),
      linesOf([tied('n'), tied('o')]),
      linesOf([row('b', 9, 'm'), tied('l')]),
      linesOf([tied('k')]),
    ];
    expect(await positionAfter(newestFirst(chunks, pulled), order)).toEqual({
      lastKey: ['c', { x: 1, y: 2 }],
      rowsAtLastKey: 5,
    });
    expect(pulled).toEqual([0, 1, 2]);
  });

  it('stops when the part has no older chunk, and says nothing for an empty newest chunk', async () => {
    const whole = [linesOf([row('a', 1, 'x'), row('a', 1, 'y')])];
    expect(await positionAfter(newestFirst(whole, []), order)).toEqual({ lastKey: ['a', 1], rowsAtLastKey: 2 });
    expect(await positionAfter(newestFirst([[]], []), order)).toBeUndefined();
  });

  it('refuses a line that is not a row', async () => {
    await expect(positionAfter(newestFirst([['[1,2]']], []), order)).rejects.toMatchObject({
      code: 'delivery.recovery_journal_inconsistent',
    });
  });
});
