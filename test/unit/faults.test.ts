import { describe, expect, it } from 'vitest';
import {
  FAULT_GRAMMAR,
  FaultSchedule,
  formatFaultRule,
  MAX_FAULT_DELAY_MS,
  MAX_FAULT_HITS,
  parseFaultSpec,
} from '../../src/domain/faults.js';

describe('CUTPOINT_FAULTS grammar', () => {
  it('parses kinds, delays, hit offsets and repeat counts', () => {
    const rules = parseFaultSpec(
      'generation.commit.cas:lose-response, generation.object.put:fail*3,stream.append.head-cas:delay=500@2,a.b:crash-after*',
    );
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
      expect.objectContaining({
        code: 'faults.unknown_cut_point',
        message: expect.stringMatching(
          /"stream\.append\.wall" \(did you mean "stream\.append\.wal"\?\).*generation\.commit\.cas, stream\.append\.wal/,
        ),
      }),
    );
    expect(() => parseFaultSpec('zzz.qqq:fail', known)).toThrow(
      expect.objectContaining({ message: expect.not.stringContaining('did you mean') }),
    );
    expect(parseFaultSpec('stream.append.wal:fail', known)).toHaveLength(1);
  });

  it('a blank spec arms nothing', () => {
    expect(parseFaultSpec('')).toEqual([]);
    expect(parseFaultSpec('  ')).toEqual([]);
  });

  it.each([
    ['a.b:fail,', 'faults.invalid_spec', /fault rule 2 is empty/],
    [',a.b:fail', 'faults.invalid_spec', /fault rule 1 is empty/],
    ['a.b:fail,,c.d:fail', 'faults.invalid_spec', /fault rule 2 is empty/],
    [' , ', 'faults.invalid_spec', /fault rule 1 is empty/],
    ['a.b:fail*0', 'faults.invalid_count', /\*<times>\) must be 1-1000000/],
    ['a.b:fail*99999999999999999999', 'faults.invalid_count', /must be 1-1000000/],
    [`a.b:fail*${MAX_FAULT_HITS + 1}`, 'faults.invalid_count', /must be 1-1000000/],
    ['a.b:fail*x', 'faults.invalid_count', /must be 1-1000000, or \* for every hit/],
    ['a.b:fail@0', 'faults.invalid_hit', /@<hit>\) must be 1-1000000/],
    ['a.b:fail@99999999999999999999', 'faults.invalid_hit', /must be 1-1000000/],
    ['a.b:fail@', 'faults.invalid_hit', /must be 1-1000000/],
    ['a.b:delay=1e20', 'faults.invalid_delay', /must be 0-600000 ms/],
    ['a.b:delay=100000000000000000000', 'faults.invalid_delay', /must be 0-600000 ms/],
    [`a.b:delay=${MAX_FAULT_DELAY_MS + 1}`, 'faults.invalid_delay', /must be 0-600000 ms/],
    ['a.b:delay=', 'faults.invalid_delay', /must be 0-600000 ms/],
  ])('refuses %s with %s', (spec, code, message) => {
    expect(() => parseFaultSpec(spec)).toThrow(
      expect.objectContaining({ code, name: 'Cutpoint.ValidationError', message: expect.stringMatching(message) }),
    );
  });

  it('accepts the bounds themselves, and states them in its grammar', () => {
    expect(
      parseFaultSpec(`a.b:delay=${MAX_FAULT_DELAY_MS}@${MAX_FAULT_HITS}*${MAX_FAULT_HITS},c.d:delay=0@1*1`),
    ).toEqual([
      { cutPoint: 'a.b', kind: 'delay', delayMs: MAX_FAULT_DELAY_MS, fromHit: MAX_FAULT_HITS, times: MAX_FAULT_HITS },
      { cutPoint: 'c.d', kind: 'delay', delayMs: 0, fromHit: 1, times: 1 },
    ]);
    expect(FAULT_GRAMMAR).toContain(`delay-ms 0-${MAX_FAULT_DELAY_MS}`);
    expect(FAULT_GRAMMAR).toContain(`hit and times 1-${MAX_FAULT_HITS}`);
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
