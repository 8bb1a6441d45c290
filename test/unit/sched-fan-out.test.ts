import { describe, expect, it } from 'vitest';
import { Scheduler } from '../support/sched/scheduler.js';

/**
 * The scheduler's moves when one actor fans out (Promise.all over two effects, as a
 * delivery part writes a chunk object while it loads the chunk): a branch whose effect ran
 * while its sibling is parked ends the actor's move (it waits on that sibling), and a branch
 * left parked after its sibling failed the Promise.all (an orphan) still moves and ends its
 * move. No I/O: the effects are resolved promises, so each schedule ends in milliseconds and
 * a stall shows as Sched.Stall after stallMs.
 */

const effect = () => Promise.resolve();

async function fanOut(seed: number, failFirst: boolean): Promise<{ trace: string[]; outcome: string }> {
  const s = new Scheduler(seed, { faultRate: 0, delayRate: 0, stallMs: 2_000 });
  let outcome = '';
  void s.spawn('fan-out', async () => {
    try {
      await Promise.all([
        s.faults.at('a', () => (failFirst ? Promise.reject(new Error('a failed')) : effect())),
        s.faults.at('b', effect),
      ]);
      await s.faults.at('after', effect);
      outcome = 'both ran';
    } catch (error) {
      outcome = (error as Error).message;
    }
  });
  void s.spawn('other', async () => {
    for (let i = 0; i < 3; i++) await s.faults.at('other', effect);
  });
  await s.run();
  return { trace: s.trace, outcome };
}

describe('scheduler: fan-out inside one actor', () => {
  it.each([1, 2, 3, 4, 5, 6, 7, 8])('seed %i: both branches move, the actor goes on, nothing stalls', async (seed) => {
    const run = await fanOut(seed, false);
    expect(run.outcome).toBe('both ran');
    expect(run.trace.filter((line) => / fan-out @ (a|b|after)$/.test(line))).toHaveLength(3);
    expect((await fanOut(seed, false)).trace).toEqual(run.trace);
  });

  it.each([1, 2, 3, 4, 5, 6, 7, 8])(
    'seed %i: a branch that fails leaves its sibling an orphan that still moves',
    async (seed) => {
      const run = await fanOut(seed, true);
      expect(run.outcome).toBe('a failed');
      expect(run.trace.filter((line) => / fan-out @ b$/.test(line))).toHaveLength(1);
      expect(run.trace.filter((line) => / other @ other$/.test(line))).toHaveLength(3);
    },
  );
});

describe('scheduler: an orphan branch of a child invocation', () => {
  it.each([1, 2, 3, 4, 5, 6])(
    'seed %i: picked after its invocation ended, it is no zombie and its parent runs on',
    async (seed) => {
      const s = new Scheduler(seed, { faultRate: 0, delayRate: 0, stallMs: 2_000 });
      const moves: string[] = [];
      void s.spawn('flow', async () => {
        // The invocation fails on its first branch; its second stays parked after the invocation ended.
        const once = s.call(
          'flow/Task',
          () =>
            Promise.all([
              s.faults.at('put', () => Promise.reject(new Error('put failed'))),
              s.faults.at('load', effect),
            ]),
          (actor) => {
            // Timing out the Task is for a live invocation only (invocations.ts); an ended one must never get here.
            if (!actor.done) return false;
            moves.push('ended invocation timed out');
            s.detach(actor);
            return true;
          },
        );
        await once.catch(() => moves.push('task failed'));
        await s.call('flow/Next', () => s.faults.at('next', effect));
        moves.push('flow went on');
      });
      await s.run();
      expect(moves).toEqual(['task failed', 'flow went on']);
      expect(s.trace.filter((line) => / flow\/Task @ load/.test(line))).toHaveLength(1);
    },
  );
});
