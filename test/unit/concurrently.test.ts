import { describe, expect, it } from 'vitest';
import { forEachConcurrently } from '../../src/engine/concurrently.js';

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('forEachConcurrently', () => {
  it('runs every item once, never more than the limit at a time', async () => {
    let running = 0;
    let peak = 0;
    const seen: number[] = [];
    await forEachConcurrently([1, 2, 3, 4, 5, 6, 7], 3, async (item) => {
      running++;
      peak = Math.max(peak, running);
      await tick();
      seen.push(item);
      running--;
    });
    expect(seen.sort()).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(peak).toBe(3);
  });

  it('after a failure starts nothing new, waits for what runs, then throws the first failure', async () => {
    const started: number[] = [];
    let finished = 0;
    const run = forEachConcurrently([0, 1, 2, 3, 4, 5], 2, async (item) => {
      started.push(item);
      await tick();
      if (item === 0) throw new Error('first');
      await tick();
      finished++;
      if (item === 1) throw new Error('second');
    });
    await expect(run).rejects.toThrow('first');
    expect(started).toEqual([0, 1]);
    expect(finished).toBe(1);
  });

  it('an empty list does nothing; a limit below one still runs one at a time', async () => {
    await forEachConcurrently([], 4, () => Promise.reject(new Error('never')));
    const order: number[] = [];
    await forEachConcurrently([1, 2], 0, async (i) => {
      order.push(i);
    });
    expect(order).toEqual([1, 2]);
  });
});
