import type { Scheduler } from './scheduler.js';

/**
 * How Step Functions invokes a Task's Lambda, as the scheduler plays it (RunFlowOptions.invoke):
 * each invocation is a child actor of the flow, and the PRNG may make it
 * - a zombie: when the invocation is picked at one of its cut points, the Task times out
 *   (`States.Timeout` reaches the flow, whose Retry/Catch act on it) while the invocation
 *   keeps running as its own actor, its later effects interleaved with the flow's next steps;
 * - a duplicate: the invocation runs to its end, its effects applied, then the flow sees
 *   `Lambda.ServiceException` (Step Functions retrying a failed invoke that had in fact
 *   run), so the ASL's Retry invokes the Task again with the same input.
 * Each kind happens at most `budget` times per schedule, so every flow still ends.
 */

export interface InvocationPolicy {
  zombie: number;
  duplicate: number;
  /** At most this many zombies and this many duplicates per schedule. */
  budget: number;
}

export const DEFAULT_INVOCATIONS: InvocationPolicy = { zombie: 0.06, duplicate: 0.06, budget: 2 };

export class InvocationFault extends Error {
  constructor(name: string, message: string) {
    super(message);
    this.name = name;
  }
}

export interface Invocations {
  invoke: (state: string, call: () => Promise<unknown>) => Promise<unknown>;
  zombies: number;
  duplicates: number;
}

export function lambdaInvocations(
  s: Scheduler,
  label: string,
  policy: InvocationPolicy = DEFAULT_INVOCATIONS,
): Invocations {
  const counts: Invocations = {
    zombies: 0,
    duplicates: 0,
    invoke: async (state, call) => {
      const name = `${label}/${state}`;
      const kind = s.rng.weighted({
        once: 1,
        zombie: counts.zombies < policy.budget ? policy.zombie : 0,
        duplicate: counts.duplicates < policy.budget ? policy.duplicate : 0,
      });
      if (kind === 'duplicate') {
        counts.duplicates++;
        await s.call(`${name}#dup`, call).catch(() => undefined);
        s.count(
          'duplicate-invocation',
          `${name}: the invocation ran, Step Functions saw Lambda.ServiceException and retries it`,
        );
        throw new InvocationFault(
          'Lambda.ServiceException',
          'the invocation ran but its response was lost (scheduled duplicate invocation)',
        );
      }
      if (kind === 'once') return s.call(name, call);
      counts.zombies++;
      let timedOut!: (error: Error) => void;
      const timeout = new Promise<never>((_resolve, reject) => (timedOut = reject));
      const parksBeforeTimeout = s.rng.int(1, 3);
      const run = s.call(`${name}#zombie`, call, (actor) => {
        if (actor.parks < parksBeforeTimeout) return false;
        s.detach(actor);
        timedOut(
          new InvocationFault('States.Timeout', 'the Task timed out; its invocation runs on (scheduled zombie)'),
        );
        return true;
      });
      run.catch(() => undefined); // a zombie's own end is nobody's to see
      return Promise.race([run, timeout]);
    },
  };
  return counts;
}
