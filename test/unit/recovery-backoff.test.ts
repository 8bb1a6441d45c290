import { describe, expect, it } from 'vitest';
import {
  DEFAULT_BACKOFF,
  nextWaitSeconds,
  parseBackoffPolicy,
  type BackoffPolicy,
} from '../../src/domain/delivery/recovery-backoff.js';

/** The automatic reconcile's backoff policy (docs/operate.md "Automatic recovery"): pure rules. */

const policy: BackoffPolicy = { attempts: 5, firstWaitSeconds: 10, maxWaitSeconds: 60, totalSeconds: 1000 };

describe('the backoff policy', () => {
  it('defaults, and reads an object or its JSON text; unset fields keep their defaults', () => {
    expect(parseBackoffPolicy(undefined)).toEqual(DEFAULT_BACKOFF);
    expect(parseBackoffPolicy({ attempts: 3 })).toEqual({ ...DEFAULT_BACKOFF, attempts: 3 });
    expect(parseBackoffPolicy(JSON.stringify(policy))).toEqual(policy);
  });

  it('refuses what it cannot honour, naming the field (delivery.recovery_backoff_invalid)', () => {
    for (const bad of [
      'not json',
      [],
      { attempts: 0 },
      { attempts: 21 },
      { firstWaitSeconds: 1.5 },
      { totalSeconds: 21601 },
      { maxWaitSeconds: 5, firstWaitSeconds: 10 },
      { retries: 3 },
    ])
      expect(() => parseBackoffPolicy(bad)).toThrow(
        expect.objectContaining({ code: 'delivery.recovery_backoff_invalid' }),
      );
  });
});

describe('the next wait', () => {
  it('doubles from the first wait up to the maximum, half of each step random', () => {
    const low = [1, 2, 3, 4].map((p) => nextWaitSeconds(policy, p, 0, 0));
    const high = [1, 2, 3, 4].map((p) => nextWaitSeconds(policy, p, 0, 0.999999));
    expect(low).toEqual([5, 10, 20, 30]);
    expect(high).toEqual([10, 20, 40, 60]);
  });

  it('none after the last probe, nor one that would start past the total time', () => {
    expect(nextWaitSeconds(policy, 5, 0, 0.5)).toBeUndefined();
    expect(nextWaitSeconds(policy, 2, 995, 0.5)).toBeUndefined();
    expect(nextWaitSeconds(policy, 2, 900, 0.5)).toBe(15);
  });

  it('never a tight loop: every wait is at least a second', () => {
    const tiny = { attempts: 20, firstWaitSeconds: 1, maxWaitSeconds: 1, totalSeconds: 100 };
    for (let p = 1; p < 20; p++) expect(nextWaitSeconds(tiny, p, 0, 0)).toBeGreaterThanOrEqual(1);
  });
});
