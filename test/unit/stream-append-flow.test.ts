import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

/**
 * The Express append flow can never be ended by its execution timeout (or the 5-minute
 * Express cap) between a head CAS and the step that interprets it: the execution's
 * TimeoutSeconds is below the cap and above the worst case of every path — each Task's
 * tries × TimeoutSeconds plus its largest total backoff, summed along the longest path.
 */
interface Retrier {
  ErrorEquals: string[];
  IntervalSeconds?: number;
  MaxAttempts?: number;
  BackoffRate?: number;
  MaxDelaySeconds?: number;
}
interface State {
  Type: string;
  Next?: string;
  TimeoutSeconds?: number;
  Retry?: Retrier[];
  Catch?: Array<{ Next: string }>;
  Choices?: Array<{ Next: string }>;
  Default?: string;
}
const asl = JSON.parse(readFileSync('statemachines/stream-append.asl.json', 'utf8')) as {
  StartAt: string;
  TimeoutSeconds?: number;
  States: Record<string, State>;
};

function worstSeconds(state: State): number {
  if (state.Type !== 'Task') return 0;
  const retries = state.Retry ?? [];
  // Every retrier can be exhausted in turn (different errors): their attempts add up.
  let tries = 1;
  let backoff = 0;
  for (const r of retries) {
    const max = r.MaxAttempts ?? 3;
    tries += max;
    for (let i = 0; i < max; i++)
      backoff += Math.min((r.IntervalSeconds ?? 1) * (r.BackoffRate ?? 2) ** i, r.MaxDelaySeconds ?? Infinity);
  }
  return tries * (state.TimeoutSeconds ?? 99_999) + backoff;
}

function longestPath(name: string, seen: Set<string>): number {
  const state = asl.States[name]!;
  if (seen.has(name)) throw new Error(`cycle through ${name}`);
  const next = new Set(
    [
      state.Next,
      state.Default,
      ...(state.Catch ?? []).map((c) => c.Next),
      ...(state.Choices ?? []).map((c) => c.Next),
    ].filter((n): n is string => !!n),
  );
  const tail = Math.max(0, ...[...next].map((n) => longestPath(n, new Set([...seen, name]))));
  return worstSeconds(state) + tail;
}

describe('stream-append.asl.json', () => {
  it('has an execution TimeoutSeconds under the Express cap and above the worst case of every path', () => {
    expect(asl.TimeoutSeconds).toBeDefined();
    expect(asl.TimeoutSeconds!).toBeLessThan(300);
    const worst = longestPath(asl.StartAt, new Set());
    expect(worst).toBeLessThan(asl.TimeoutSeconds!);
  });

  it('every Task that can follow a head CAS catches into an interpretation step, never ends the execution unhandled', () => {
    const commit = asl.States.CommitHead!;
    const targets = (commit.Catch ?? []).map((c) => c.Next);
    expect(targets).toEqual(expect.arrayContaining(['SuspendLane', 'RetireAttempt']));
    expect(commit.Next).toBe('Done');
    for (const name of ['SuspendLane', 'RetireAttempt']) expect(asl.States[name]!.Next).toBe('Done');
  });
});
