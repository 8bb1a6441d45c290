import { describe, expect, it } from 'vitest';
import { eligible } from '../../src/stream/gc/liveness.js';
import {
  graceFromEnv,
  lanePrefixes,
  parseGrace,
  policyDigestOf,
  DEFAULT_GRACE_SECONDS,
} from '../../src/stream/gc/model.js';
import { retirable } from '../../src/stream/gc/retention.js';
import { eachOfPage, runOf } from '../../src/stream/gc/state.js';
import type { LifecycleRoot } from '../../src/stream/gc/model.js';

describe('GC policy (pure rules)', () => {
  it('grace: durations with their unit, validated; a bare number or a space is refused, never guessed', () => {
    expect(parseGrace('30s')).toBe(30);
    expect(parseGrace('10m')).toBe(600);
    expect(parseGrace('6h')).toBe(21_600);
    expect(parseGrace('2d')).toBe(172_800);
    expect(parseGrace('0s')).toBe(0);
    for (const bad of [
      '10 minutes',
      '-1s',
      '1.5h',
      '91d',
      '',
      'm',
      -1,
      1.5,
      null,
      {},
      12,
      0,
      '45',
      '1h ',
      ' 1h',
      '0x10s',
    ]) {
      expect(() => parseGrace(bad), String(bad)).toThrow(
        expect.objectContaining({ name: 'Cutpoint.ValidationError', code: 'stream.invalid_grace' }),
      );
    }
    expect(graceFromEnv({})).toBe(DEFAULT_GRACE_SECONDS);
    expect(graceFromEnv({ CUTPOINT_GC_GRACE: '15m' })).toBe(900);
    expect(() => graceFromEnv({ CUTPOINT_GC_GRACE: 'soon' })).toThrow(
      expect.objectContaining({ code: 'stream.invalid_grace' }),
    );
    expect(() => graceFromEnv({ CUTPOINT_GC_GRACE: '15m ' })).toThrow(
      expect.objectContaining({ code: 'stream.invalid_grace' }),
    );
  });

  it('the policy digest names grace and prefixes, not their order', () => {
    const prefixes = lanePrefixes({ stream: 's', partition: 0 });
    expect(policyDigestOf({ graceSeconds: 60, prefixes })).toBe(
      policyDigestOf({ graceSeconds: 60, prefixes: [...prefixes].reverse() }),
    );
    expect(policyDigestOf({ graceSeconds: 60, prefixes })).not.toBe(policyDigestOf({ graceSeconds: 61, prefixes }));
    expect(policyDigestOf({ graceSeconds: 60, prefixes })).not.toBe(
      policyDigestOf({ graceSeconds: 60, prefixes: lanePrefixes({ stream: 's', partition: 1 }) }),
    );
  });

  it('grace is enforced: DEAD only past first-seen + grace, TRIMMED at once, live or uncertain never', () => {
    const deadline = new Date('2026-01-01T00:10:00Z');
    expect(eligible('DEAD', new Date('2026-01-01T00:09:59Z'), deadline)).toBe(false);
    expect(eligible('DEAD', deadline, deadline)).toBe(true);
    expect(eligible('TRIMMED', new Date('2026-01-01T00:00:00Z'), deadline)).toBe(true);
    expect(eligible('LIVE', new Date('2027-01-01T00:00:00Z'), deadline)).toBe(false);
    expect(eligible('MAY_COMMIT', new Date('2027-01-01T00:00:00Z'), deadline)).toBe(false);
  });

  it('retention: only a DELETED root is retired, and only one grace after its delete', () => {
    const root = (state: LifecycleRoot['state'], deletedAt?: string) =>
      ({ state, ...(deletedAt ? { deletedAt } : {}) }) as LifecycleRoot;
    const at = '2026-01-01T00:00:00Z';
    expect(retirable(root('DELETED', at), new Date('2026-01-01T00:09:59Z'), 600)).toBe(false);
    expect(retirable(root('DELETED', at), new Date('2026-01-01T00:10:00Z'), 600)).toBe(true);
    expect(retirable(root('DELETED', at), new Date(at), 0)).toBe(true);
    expect(retirable(root('DELETED'), new Date('2027-01-01T00:00:00Z'), 0), 'no delete time: kept').toBe(false);
    for (const state of ['ACTIVE', 'MARKED', 'DELETING'] as const)
      expect(retirable(root(state, at), new Date('2027-01-01T00:00:00Z'), 0), state).toBe(false);
  });

  it('a run handed between steps cannot widen its policy', () => {
    const run = runOf({ stream: 's', partition: 0, grace: '10m' }, 0);
    expect(run.policy).toEqual({ graceSeconds: 600, prefixes: lanePrefixes({ stream: 's', partition: 0 }) });
    expect(runOf(JSON.parse(JSON.stringify(run)), 0)).toEqual(run);
    const widened = { ...run, policy: { ...run.policy, prefixes: ['', ...run.policy.prefixes] } };
    expect(() => runOf(widened, 0)).toThrow(expect.objectContaining({ code: 'stream.gc_policy_mismatch' }));
    const otherLane = { ...run, partition: 1 };
    expect(() => runOf(otherLane, 0)).toThrow(expect.objectContaining({ code: 'stream.gc_policy_mismatch' }));
    expect(() => runOf({ stream: 's', partition: 0, dryRun: 'yes' }, 0)).toThrow(
      expect.objectContaining({ code: 'stream.invalid_dry_run' }),
    );
    const sweeping = { ...run, sweep: { phase: 'objects', done: false } };
    expect(() => runOf(sweeping, 0)).toThrow(expect.objectContaining({ code: 'stream.gc_policy_mismatch' }));
  });

  it('a page is worked with bounded parallelism, every item once', async () => {
    let running = 0;
    let peak = 0;
    const seen: number[] = [];
    await eachOfPage(
      Array.from({ length: 50 }, (_, i) => i),
      async (n) => {
        running++;
        peak = Math.max(peak, running);
        await new Promise((r) => setImmediate(r));
        seen.push(n);
        running--;
      },
    );
    expect(seen.sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i));
    expect(peak).toBeLessThanOrEqual(8);
  });

  it('a failed page leaves nothing running: no item starts after the failure, and the step fails only once the items in flight settled', async () => {
    const started: number[] = [];
    let inFlight = 0;
    const failed = eachOfPage(
      Array.from({ length: 50 }, (_, i) => i),
      async (n) => {
        started.push(n);
        inFlight++;
        try {
          if (n === 3) throw new Error('crash at item 3');
          for (let t = 0; t < 5; t++) await new Promise((r) => setImmediate(r));
        } finally {
          inFlight--;
        }
      },
    );
    await expect(failed).rejects.toThrow('crash at item 3');
    expect(inFlight, 'an item still running after the step failed').toBe(0);
    const settled = [...started];
    for (let t = 0; t < 20; t++) await new Promise((r) => setImmediate(r));
    expect(started, 'an item started after the step failed').toEqual(settled);
    expect(started.length).toBeLessThan(50);
  });

  it('a step never mutates its input: the run state a retry gets is the one the failed attempt got', () => {
    const input = JSON.parse(JSON.stringify(runOf({ stream: 's', partition: 0, grace: '10m' }, 0))) as ReturnType<
      typeof runOf
    >;
    const before = JSON.stringify(input);
    const run = runOf(input, 0);
    run.deleting.push({ key: 'wal/s/0/a/x.wal', epoch: 1, deleteId: 'd' });
    run.totals.deleted++;
    expect(JSON.stringify(input)).toBe(before);
  });
});
