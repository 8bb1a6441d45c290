import { describe, expect, it } from 'vitest';
import { classifyClickHouseError } from '../../src/domain/clickhouse-errors.js';
import {
  readRetryBackoffMs,
  retryRead,
  SYSTEM_RETRY_TIMING,
  type ReadRetryPolicy,
  type RetryTiming,
  type StatementKind,
} from '../../src/engine/read-retry.js';

const serverError = (code: string, type: string, message: string) => Object.assign(new Error(message), { code, type });
const noNode = () => serverError('999', 'KEEPER_EXCEPTION', 'No node, path: /clickhouse/x');

/** A clock the test moves: attempts and sleeps advance it; nothing waits for real. */
function fakeTiming(
  options: { oversleepMs?: number; onSleep?: (ms: number, signal: AbortSignal) => Promise<void> | void } = {},
) {
  let now = 1_000_000;
  const sleeps: number[] = [];
  const timing: RetryTiming = {
    clock: { now: () => new Date(now) },
    sleep: async (ms, signal) => {
      sleeps.push(ms);
      now += ms + (options.oversleepMs ?? 0);
      await options.onSleep?.(ms, signal);
    },
  };
  return { timing, sleeps, advance: (ms: number) => (now += ms), now: () => now };
}

/** An attempt that takes `durationMs` of the fake clock and fails with each error in turn, then succeeds. */
function scripted(fake: ReturnType<typeof fakeTiming>, errors: unknown[], durationMs = 10) {
  const starts: number[] = [];
  const signals: AbortSignal[] = [];
  const attempt = async (signal: AbortSignal): Promise<string> => {
    starts.push(fake.now());
    signals.push(signal);
    fake.advance(durationMs);
    const error = errors[starts.length - 1];
    if (error !== undefined) throw error;
    return `ok after ${starts.length}`;
  };
  return { attempt, starts, signals };
}

const POLICY: ReadRetryPolicy = { max_attempts: 3, max_elapsed_ms: 10_000 };

async function failureOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a failure');
    },
    (error: unknown) => error,
  );
}

// U6 and K3 are governance acceptance cases (docs/testing.md#governance-acceptance).
describe('retryRead (U6, K3)', () => {
  it('refuses any kind but read before any attempt', async () => {
    const fake = fakeTiming();
    const { attempt, starts } = scripted(fake, []);
    for (const kind of ['mutation', 'READ', 'write', undefined] as unknown as StatementKind[]) {
      const error = await failureOf(
        retryRead(kind, POLICY, new AbortController().signal, attempt, classifyClickHouseError, fake.timing),
      );
      expect(error).toMatchObject({ name: 'Cutpoint.ValidationError', code: 'cutpoint.retry_not_read_only' });
    }
    expect(starts).toEqual([]);
  });

  it('refuses a policy out of bounds before any attempt', async () => {
    const fake = fakeTiming();
    const { attempt, starts } = scripted(fake, []);
    const bad: ReadRetryPolicy[] = [
      { max_attempts: 0, max_elapsed_ms: 1000 },
      { max_attempts: 4, max_elapsed_ms: 1000 },
      { max_attempts: 1.5, max_elapsed_ms: 1000 },
      { max_attempts: 2, max_elapsed_ms: 0 },
      { max_attempts: 2, max_elapsed_ms: 10_001 },
      { max_attempts: 2, max_elapsed_ms: Number.NaN },
    ];
    for (const policy of bad) {
      const error = await failureOf(
        retryRead('read', policy, new AbortController().signal, attempt, classifyClickHouseError, fake.timing),
      );
      expect(error).toMatchObject({ name: 'Cutpoint.ValidationError', code: 'cutpoint.retry_policy_invalid' });
    }
    expect(starts).toEqual([]);
  });

  it('without a policy makes exactly one attempt, even for KEEPER_NO_NODE', async () => {
    const fake = fakeTiming();
    const first = noNode();
    const { attempt, starts } = scripted(fake, [first]);
    expect(
      await failureOf(
        retryRead('read', undefined, new AbortController().signal, attempt, classifyClickHouseError, fake.timing),
      ),
    ).toBe(first);
    expect(starts).toHaveLength(1);
    expect(fake.sleeps).toEqual([]);
  });

  it('returns the first success and hands every attempt the caller signal', async () => {
    const fake = fakeTiming();
    const controller = new AbortController();
    const { attempt, starts, signals } = scripted(fake, [noNode()]);
    expect(await retryRead('read', POLICY, controller.signal, attempt, classifyClickHouseError, fake.timing)).toBe(
      'ok after 2',
    );
    expect(starts).toHaveLength(2);
    expect(signals).toEqual([controller.signal, controller.signal]);
    expect(fake.sleeps).toEqual([readRetryBackoffMs(1)]);
  });

  it('passes a thrown non-Error value through unchanged', async () => {
    for (const thrown of [null, undefined, 'boom', 42]) {
      const fake = fakeTiming();
      const attempt = async (): Promise<string> => {
        throw thrown;
      };
      expect(
        await failureOf(
          retryRead('read', POLICY, new AbortController().signal, attempt, classifyClickHouseError, fake.timing),
        ),
      ).toBe(thrown);
    }
  });

  it('stops at max_attempts and throws the last attempt error', async () => {
    for (const max of [1, 2, 3]) {
      const fake = fakeTiming();
      const errors = [noNode(), noNode(), noNode(), noNode()];
      const { attempt, starts } = scripted(fake, errors);
      const policy = { max_attempts: max, max_elapsed_ms: 10_000 };
      expect(
        await failureOf(
          retryRead('read', policy, new AbortController().signal, attempt, classifyClickHouseError, fake.timing),
        ),
      ).toBe(errors[max - 1]);
      expect(starts).toHaveLength(max);
      expect(fake.sleeps).toEqual([100, 200].slice(0, max - 1));
    }
  });

  it('retries only KEEPER_NO_NODE: any other class fails at once', async () => {
    const others = [
      serverError('999', 'KEEPER_EXCEPTION', 'Session expired'),
      serverError('999', 'KEEPER_EXCEPTION', 'Connection loss'),
      serverError('999', 'KEEPER_EXCEPTION', "Can't get data for node '/x': node doesn't exist (No node)"),
      serverError('159', 'TIMEOUT_EXCEEDED', 'timeout'),
      serverError('60', 'UNKNOWN_TABLE', 'No node'),
      new Error('No node, path: /x'),
      Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }),
    ];
    for (const error of others) {
      const fake = fakeTiming();
      const { attempt, starts } = scripted(fake, [error]);
      expect(
        await failureOf(
          retryRead('read', POLICY, new AbortController().signal, attempt, classifyClickHouseError, fake.timing),
        ),
      ).toBe(error);
      expect(starts).toHaveLength(1);
    }
  });

  it('starts no attempt at or after max_elapsed_ms from the first (clock injected)', async () => {
    // Attempts of 6 s under a 10 s budget: the second starts at 6.1 s, a third would at 12.3 s.
    const fake = fakeTiming();
    const t0 = fake.now();
    const errors = [noNode(), noNode(), noNode()];
    const slow = scripted(fake, errors, 6000);
    expect(
      await failureOf(
        retryRead('read', POLICY, new AbortController().signal, slow.attempt, classifyClickHouseError, fake.timing),
      ),
    ).toBe(errors[1]);
    expect(slow.starts.map((s) => s - t0)).toEqual([0, 6100]);
    // The third retry is refused before its backoff, not after sleeping through it.
    expect(fake.sleeps).toEqual([100]);

    // The boundary: a retry that would start exactly at the budget does not start; 1 ms more and it does.
    for (const [budget, attempts] of [
      [1100, 1],
      [1101, 2],
    ] as const) {
      const at = fakeTiming();
      const s = scripted(at, [noNode(), noNode()], 1000);
      await failureOf(
        retryRead(
          'read',
          { max_attempts: 3, max_elapsed_ms: budget },
          new AbortController().signal,
          s.attempt,
          classifyClickHouseError,
          at.timing,
        ),
      );
      expect(s.starts).toHaveLength(attempts);
      expect(at.sleeps).toEqual([100].slice(0, attempts - 1));
    }
  });

  it('a backoff that overran the budget starts nothing and throws the last attempt error', async () => {
    const fake = fakeTiming({ oversleepMs: 20_000 });
    const first = noNode();
    const { attempt, starts } = scripted(fake, [first, noNode()]);
    expect(
      await failureOf(
        retryRead('read', POLICY, new AbortController().signal, attempt, classifyClickHouseError, fake.timing),
      ),
    ).toBe(first);
    expect(starts).toHaveLength(1);
    expect(fake.sleeps).toEqual([100]);
  });

  it('an aborted signal prevents the first attempt', async () => {
    const fake = fakeTiming();
    const controller = new AbortController();
    const deadline = new Error('deadline');
    controller.abort(deadline);
    const { attempt, starts } = scripted(fake, []);
    expect(
      await failureOf(retryRead('read', POLICY, controller.signal, attempt, classifyClickHouseError, fake.timing)),
    ).toBe(deadline);
    expect(starts).toEqual([]);
  });

  it('an abort during an attempt is never retried, whatever the error says', async () => {
    const fake = fakeTiming();
    const controller = new AbortController();
    const failure = noNode();
    let starts = 0;
    const attempt = async (): Promise<string> => {
      starts++;
      controller.abort(new Error('deadline'));
      throw failure;
    };
    expect(
      await failureOf(retryRead('read', POLICY, controller.signal, attempt, classifyClickHouseError, fake.timing)),
    ).toBe(failure);
    expect(starts).toBe(1);
    expect(fake.sleeps).toEqual([]);
  });

  it('an abort during an attempt is not retried even when the classifier ignores the abort', async () => {
    const fake = fakeTiming();
    const controller = new AbortController();
    const alwaysNoNode = () => ({ errorClass: 'KEEPER_NO_NODE' as const });
    const failure = noNode();
    let starts = 0;
    const attempt = async (): Promise<string> => {
      starts++;
      controller.abort(new Error('deadline'));
      throw failure;
    };
    expect(await failureOf(retryRead('read', POLICY, controller.signal, attempt, alwaysNoNode, fake.timing))).toBe(
      failure,
    );
    expect(starts).toBe(1);
    expect(fake.sleeps).toEqual([]);
  });

  it('an abort mid-backoff starts no further attempt, whether the sleep rejects or resolves', async () => {
    for (const rejects of [true, false]) {
      const controller = new AbortController();
      const deadline = new Error('deadline');
      const fake = fakeTiming({
        onSleep: (_ms, signal) => {
          controller.abort(deadline);
          expect(signal.aborted).toBe(true);
          if (rejects) throw signal.reason;
        },
      });
      const { attempt, starts } = scripted(fake, [noNode(), noNode()]);
      expect(
        await failureOf(retryRead('read', POLICY, controller.signal, attempt, classifyClickHouseError, fake.timing)),
      ).toBe(deadline);
      expect(starts).toHaveLength(1);
      expect(fake.sleeps).toEqual([100]);
    }
  });

  it('the default sleeper is abortable: an abort ends a long backoff at once', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('deadline')), 5);
    // A minute-long sleep that settles within the test's 5 s timeout was cut short by the abort.
    await expect(SYSTEM_RETRY_TIMING.sleep(60_000, controller.signal)).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('with the default timing, an abort during the backoff ends the call with the signal reason', async () => {
    const controller = new AbortController();
    let starts = 0;
    const attempt = async (): Promise<string> => {
      starts++;
      setTimeout(() => controller.abort(new Error('deadline')), 5);
      throw noNode();
    };
    expect(
      await failureOf(retryRead('read', POLICY, controller.signal, attempt, classifyClickHouseError)),
    ).toMatchObject({ message: 'deadline' });
    expect(starts).toBe(1);
  });
});
