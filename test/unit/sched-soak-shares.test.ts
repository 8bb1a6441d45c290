import { describe, expect, it } from 'vitest';
import { indicesOf, scheduleAt, type AnyScenario, type Share } from '../sched/soak-worker.js';

const scenarios = ['generation', 'stream', 'delivery', 'publication'].map(
  (name) => ({ name }) as unknown as AnyScenario,
);
const share = (total: number, index: number, of: number): Share => ({
  scenarios,
  total,
  first: 1,
  index,
  of,
  stopOnFailure: false,
});
const names = (s: Share): string[] => [...indicesOf(s)].map((i) => scheduleAt(s, i).scenario.name);

describe('the soak deals whole rounds to its workers', () => {
  it('every schedule exactly once over the workers, whatever the total', () => {
    for (const [total, of] of [
      [10, 2],
      [10_000, 2],
      [7, 3],
      [3, 1],
      [0, 2],
    ] as const) {
      const all = Array.from({ length: of }, (_, w) => [...indicesOf(share(total, w, of))])
        .flat()
        .sort((a, b) => a - b);
      expect(all).toEqual(Array.from({ length: total }, (_, i) => i));
    }
  });

  it('each of two workers runs every one of four scenarios, the same number of times', () => {
    for (const w of [0, 1]) {
      const counts = new Map<string, number>();
      for (const name of names(share(1_000, w, 2))) counts.set(name, (counts.get(name) ?? 0) + 1);
      expect(Object.fromEntries(counts)).toEqual({ generation: 125, stream: 125, delivery: 125, publication: 125 });
    }
  });

  it('a round is one seed of every scenario: of 14 schedules, worker 1 of 2 runs seed 2 whole and seed 4 up to the end', () => {
    const s = share(14, 1, 2);
    expect([...indicesOf(s)].map((i) => `${scheduleAt(s, i).scenario.name}:${scheduleAt(s, i).seed}`)).toEqual([
      'generation:2',
      'stream:2',
      'delivery:2',
      'publication:2',
      'generation:4',
      'stream:4',
    ]);
  });
});
