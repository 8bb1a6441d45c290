import { describe, expect, it } from 'vitest';
import { FaultSchedule, formatFaultRule, parseFaultSpec } from '../../src/domain/faults.js';

describe('CUTPOINT_FAULTS grammar', () => {
  it('parses kinds, delays, hit offsets and repeat counts', () => {
    const rules = parseFaultSpec('generation.commit.cas:lose-response, generation.object.put:fail*3,stream.append.head-cas:delay=500@2,a.b:crash-after*');
    expect(rules).toEqual([
      { cutPoint: 'generation.commit.cas', kind: 'lose-response', delayMs: 250, fromHit: 1, times: 1 },
      { cutPoint: 'generation.object.put', kind: 'fail', delayMs: 250, fromHit: 1, times: 3 },
      { cutPoint: 'stream.append.head-cas', kind: 'delay', delayMs: 500, fromHit: 2, times: 1 },
      { cutPoint: 'a.b', kind: 'crash-after', delayMs: 250, fromHit: 1, times: Infinity },
    ]);
    expect(rules.map(formatFaultRule)).toEqual([
      'generation.commit.cas:lose-response',
      'generation.object.put:fail*3',
      'stream.append.head-cas:delay=500@2',
      'a.b:crash-after*',
    ]);
  });

  it.each([
    ['no-kind', 'faults.invalid_spec'],
    ['generation.commit.cas:explode', 'faults.invalid_kind'],
    ['Generation.Commit:fail', 'faults.invalid_cut_point'],
    ['single:fail', 'faults.invalid_cut_point'],
    ['a.b:fail=100', 'faults.invalid_spec'],
  ])('rejects %s with %s', (spec, code) => {
    expect(() => parseFaultSpec(spec)).toThrow(expect.objectContaining({ code, name: 'Cutpoint.ValidationError' }));
  });

  it('with a registry, refuses names outside it (faults.unknown_cut_point) and accepts those in it', () => {
    const known = new Set(['generation.commit.cas', 'stream.append.wal']);
    expect(() => parseFaultSpec('generation.commit.cas:fail,stream.append.wall:fail', known)).toThrow(
      expect.objectContaining({ code: 'faults.unknown_cut_point', message: expect.stringMatching(/"stream\.append\.wall" \(did you mean "stream\.append\.wal"\?\).*generation\.commit\.cas, stream\.append\.wal/) }),
    );
    expect(() => parseFaultSpec('zzz.qqq:fail', known)).toThrow(expect.objectContaining({ message: expect.not.stringContaining('did you mean') }));
    expect(parseFaultSpec('stream.append.wal:fail', known)).toHaveLength(1);
  });

  it('an empty spec arms nothing', () => {
    expect(parseFaultSpec(' , ')).toEqual([]);
  });
});

describe('FaultSchedule', () => {
  it('fires a rule on its hits only, counting hits per cut point', () => {
    const schedule = new FaultSchedule(parseFaultSpec('a.b:fail@2*2,c.d:crash-before'));
    const fired = [1, 2, 3, 4].map(() => schedule.hit('a.b')?.kind ?? null);
    expect(fired).toEqual([null, 'fail', 'fail', null]);
    expect(schedule.hit('c.d')?.kind).toBe('crash-before');
    expect(schedule.hit('c.d')).toBeUndefined();
    expect(schedule.hitCounts()).toEqual({ 'a.b': 4, 'c.d': 2 });
    expect(schedule.firedCount()).toBe(3);
  });
});
