import { describe, expect, it } from 'vitest';
import { lambdaInvocations } from '../support/sched/invocations.js';
import { Scheduler } from '../support/sched/scheduler.js';

/**
 * The scheduler's own rules, with actors whose effects are in-memory appends (no store):
 * one actor moves at a time, the same seed gives the same history, faults apply as their
 * kind says, a zombie runs on after its Task timed out, a duplicate invocation applies
 * twice, and a stall is reported instead of hanging.
 */

/** Three actors, each making `steps` effects at cut point `sched.effect`; returns the log and the trace. */
async function history(seed: number, steps = 4, options = {}) {
  const s = new Scheduler(seed, { faultRate: 0, delayRate: 0, ...options });
  const log: string[] = [];
  let running = 0;
  let overlap = false;
  const actor = (name: string) => async () => {
    for (let i = 0; i < steps; i++) {
      await s.faults.at('sched.effect', async () => {
        running++;
        if (running > 1) overlap = true;
        await Promise.resolve();
        log.push(`${name}${i}`);
        running--;
      });
    }
  };
  for (const name of ['a', 'b', 'c']) void s.spawn(name, actor(name));
  await s.run();
  return { log, trace: s.trace, overlap, s };
}

describe('the deterministic scheduler', () => {
  it('runs every actor to its end, one effect at a time, each actor in its own order', async () => {
    const { log, overlap } = await history(7);
    expect(log).toHaveLength(12);
    expect(overlap).toBe(false);
    for (const name of ['a', 'b', 'c'])
      expect(log.filter((l) => l.startsWith(name))).toEqual([0, 1, 2, 3].map((i) => `${name}${i}`));
  });

  it('gives the same interleaving for the same seed, and other interleavings for other seeds', async () => {
    const one = await history(42);
    const again = await history(42);
    expect(again.log).toEqual(one.log);
    expect(again.trace).toEqual(one.trace);
    const others = new Set<string>();
    for (const seed of [1, 2, 3, 4, 5, 6]) others.add((await history(seed)).log.join(' '));
    expect(others.size).toBeGreaterThan(3);
  });

  it('applies faults as their kind says: crash-after and lose-response apply the effect, crash-before, fail and lose-request do not', async () => {
    const outcomes: Array<{ fault: string; applied: boolean; error: string }> = [];
    for (let seed = 0; seed < 200 && new Set(outcomes.map((o) => o.fault)).size < 5; seed++) {
      const s = new Scheduler(seed, { faultRate: 1, maxFaults: 1, delayRate: 0 });
      let applied = false;
      let error = '';
      void s.spawn('one', async () => {
        await s.faults.at('sched.effect', async () => void (applied = true)).catch((e: Error) => void (error = e.name));
      });
      await s.run();
      const fault = [...s.faultsFired.keys()][0]!;
      outcomes.push({ fault, applied, error });
    }
    const byKind = new Map(outcomes.map((o) => [o.fault, o]));
    expect([...byKind.keys()].sort()).toEqual(['crash-after', 'crash-before', 'fail', 'lose-request', 'lose-response']);
    expect(byKind.get('crash-after')).toMatchObject({ applied: true, error: 'Cutpoint.WorkerCrashed' });
    expect(byKind.get('lose-response')).toMatchObject({ applied: true, error: 'Cutpoint.OutcomeUnknown' });
    expect(byKind.get('crash-before')).toMatchObject({ applied: false, error: 'Cutpoint.WorkerCrashed' });
    expect(byKind.get('fail')).toMatchObject({ applied: false, error: 'Cutpoint.EffectFailed' });
    expect(byKind.get('lose-request')).toMatchObject({ applied: false, error: 'Cutpoint.OutcomeUnknown' });
  });

  it('times a Task out while its invocation runs on (a zombie), and lets an invocation run before the flow sees Lambda.ServiceException (a duplicate once the ASL retries)', async () => {
    const seen = { zombie: false, duplicate: false };
    for (let seed = 0; seed < 400 && !(seen.zombie && seen.duplicate); seed++) {
      const s = new Scheduler(seed, { faultRate: 0, delayRate: 0 });
      const invocations = lambdaInvocations(s, 'flow', { zombie: 0.5, duplicate: 0.5, budget: 1 });
      const effects: string[] = [];
      const task = (n: number) => async () => {
        for (let i = 0; i < 3; i++) await s.faults.at('sched.effect', async () => void effects.push(`task${n}.${i}`));
        return n;
      };
      const outcomes: string[] = [];
      void s.spawn('flow', async () => {
        for (let n = 0; n < 2; n++)
          outcomes.push(await invocations.invoke(`T${n}`, task(n)).then(String, (e: Error) => e.name));
      });
      await s.run();
      if (invocations.zombies && outcomes.includes('States.Timeout')) {
        seen.zombie = true;
        // The zombie still made every one of its effects, after its Task had failed.
        expect(effects.filter((e) => e.startsWith(`task${outcomes.indexOf('States.Timeout')}.`))).toHaveLength(3);
      }
      if (invocations.duplicates && outcomes.includes('Lambda.ServiceException')) {
        seen.duplicate = true;
        expect(effects.filter((e) => e.startsWith(`task${outcomes.indexOf('Lambda.ServiceException')}.`))).toHaveLength(
          3,
        );
      }
    }
    expect(seen).toEqual({ zombie: true, duplicate: true });
  });

  it('reports an actor that never reaches a cut point as a stall, by its stable name', async () => {
    const s = new Scheduler(1, { stallMs: 50 });
    void s.spawn('stuck', () => new Promise<void>(() => undefined));
    await expect(s.run()).rejects.toMatchObject({ name: 'Sched.Stall' });
  });
});
