import { afterEach, describe, expect, it } from 'vitest';
import {
  assertWindowClosed,
  parseUtcTimestamp,
  resolveWindow,
  validateSealedWindow,
  windowContains,
  windowIsClosed,
  type WindowPolicy,
} from '../../src/domain/delivery/window.js';

const at = (iso: string) => new Date(iso);
const rolling = (days: number, boundary: 'day' | 'hour' = 'day'): WindowPolicy => ({ kind: 'rolling', days, boundary });

describe('parseUtcTimestamp: exact UTC only', () => {
  it.each([
    ['2026-11-01T00:00:00Z', Date.UTC(2026, 10, 1)],
    ['2026-11-01T12:34:56.7Z', Date.UTC(2026, 10, 1, 12, 34, 56, 700)],
    ['2026-11-01T12:34:56.789Z', Date.UTC(2026, 10, 1, 12, 34, 56, 789)],
    ['2028-02-29T00:00:00Z', Date.UTC(2028, 1, 29)],
    ['1970-01-01T00:00:00Z', 0],
  ])('accepts %s', (text, ms) => {
    expect(parseUtcTimestamp(text)).toBe(ms);
  });

  it.each([
    '2026-11-01T00:00:00+00:00',
    '2026-11-01T00:00:00',
    '2026-11-01T00:00:00z',
    '2026-11-01 00:00:00Z',
    '2026-11-01T00:00Z',
    '2026-11-01',
    '2026-11-01T00:00:00.1234Z',
    '2027-02-29T00:00:00Z',
    '2026-04-31T00:00:00Z',
    '2026-11-01T24:00:00Z',
    '2026-11-01T23:60:00Z',
    '2026-11-01T23:59:60Z',
    '1969-12-31T23:59:59Z',
    '+02026-11-01T00:00:00Z',
  ])('refuses %s', (text) => {
    expect(parseUtcTimestamp(text)).toBeUndefined();
  });
});

describe('resolveWindow: fixed', () => {
  it('canonicalizes the authored bounds and ignores now', () => {
    const policy: WindowPolicy = { kind: 'fixed', start: '2026-11-01T00:00:00Z', end: '2026-11-02T00:00:00.5Z' };
    const expected = { start: '2026-11-01T00:00:00.000Z', end: '2026-11-02T00:00:00.500Z' };
    expect(resolveWindow(policy, at('2020-01-01T00:00:00Z'))).toEqual(expected);
    expect(resolveWindow(policy, at('2030-06-15T10:00:00Z'))).toEqual(expected);
  });

  it.each([
    { kind: 'fixed', start: '2026-11-02T00:00:00Z', end: '2026-11-01T00:00:00Z' },
    { kind: 'fixed', start: '2026-11-01T00:00:00Z', end: '2026-11-01T00:00:00.000Z' },
    { kind: 'fixed', start: '2026-11-01T00:00:00+01:00', end: '2026-11-02T00:00:00Z' },
  ] as WindowPolicy[])('refuses an invalid hand-built policy (%#)', (policy) => {
    expect(() => resolveWindow(policy, new Date())).toThrow(
      expect.objectContaining({ code: 'delivery.window_invalid' }),
    );
  });
});

describe('resolveWindow: rolling N days ending at the last boundary <= now', () => {
  it('mid-day: ends at the previous UTC midnight', () => {
    expect(resolveWindow(rolling(7), at('2026-11-29T13:17:31.123Z'))).toEqual({
      start: '2026-11-22T00:00:00.000Z',
      end: '2026-11-29T00:00:00.000Z',
    });
  });

  it('exactly at a boundary: the window ends at now (half-open, so now itself is excluded)', () => {
    expect(resolveWindow(rolling(1), at('2026-11-29T00:00:00.000Z'))).toEqual({
      start: '2026-11-28T00:00:00.000Z',
      end: '2026-11-29T00:00:00.000Z',
    });
  });

  it('one millisecond before a boundary: the previous boundary', () => {
    expect(resolveWindow(rolling(1), at('2026-11-28T23:59:59.999Z'))).toEqual({
      start: '2026-11-27T00:00:00.000Z',
      end: '2026-11-28T00:00:00.000Z',
    });
  });

  it('hour boundary: N whole days ending at the top of the last hour', () => {
    expect(resolveWindow(rolling(1, 'hour'), at('2026-11-29T13:17:31Z'))).toEqual({
      start: '2026-11-28T13:00:00.000Z',
      end: '2026-11-29T13:00:00.000Z',
    });
    expect(resolveWindow(rolling(2, 'hour'), at('2026-11-29T13:00:00.000Z'))).toEqual({
      start: '2026-11-27T13:00:00.000Z',
      end: '2026-11-29T13:00:00.000Z',
    });
  });

  it('crosses month, leap-day and year boundaries by calendar', () => {
    expect(resolveWindow(rolling(1), at('2026-03-01T05:00:00Z'))).toEqual({
      start: '2026-02-28T00:00:00.000Z',
      end: '2026-03-01T00:00:00.000Z',
    });
    expect(resolveWindow(rolling(2), at('2028-03-01T05:00:00Z'))).toEqual({
      start: '2028-02-28T00:00:00.000Z',
      end: '2028-03-01T00:00:00.000Z',
    });
    expect(resolveWindow(rolling(7), at('2027-01-01T00:00:00Z'))).toEqual({
      start: '2026-12-25T00:00:00.000Z',
      end: '2027-01-01T00:00:00.000Z',
    });
    expect(resolveWindow(rolling(1, 'hour'), at('2027-01-01T00:30:00Z'))).toEqual({
      start: '2026-12-31T00:00:00.000Z',
      end: '2027-01-01T00:00:00.000Z',
    });
    expect(resolveWindow(rolling(366), at('2029-01-01T00:00:00Z'))).toEqual({
      start: '2028-01-01T00:00:00.000Z',
      end: '2029-01-01T00:00:00.000Z',
    });
  });

  it('every day of a rolling window is exactly 24 h, across local DST changes', () => {
    // 2026-10-25 (EU) and 2026-11-01 (US) are DST transitions in local time; UTC has none.
    for (const now of [
      '2026-10-25T01:30:00Z',
      '2026-11-01T06:30:00Z',
      '2026-03-29T01:00:00Z',
      '2026-03-08T07:00:00Z',
    ]) {
      const w = resolveWindow(rolling(3), at(now));
      expect(Date.parse(w.end) - Date.parse(w.start)).toBe(3 * 86_400_000);
      expect(w.end.endsWith('T00:00:00.000Z')).toBe(true);
    }
  });

  describe('is independent of the process time zone', () => {
    const original = process.env.TZ;
    afterEach(() => {
      if (original === undefined) delete process.env.TZ;
      else process.env.TZ = original;
    });

    it.each(['UTC', 'America/New_York', 'Europe/Berlin', 'Australia/Lord_Howe', 'Asia/Kathmandu'])('%s', (tz) => {
      process.env.TZ = tz;
      expect(resolveWindow(rolling(7), at('2026-11-01T06:30:00Z'))).toEqual({
        start: '2026-10-25T00:00:00.000Z',
        end: '2026-11-01T00:00:00.000Z',
      });
      expect(
        resolveWindow({ kind: 'fixed', start: '2026-10-25T00:00:00Z', end: '2026-11-01T00:00:00Z' }, new Date()),
      ).toEqual({
        start: '2026-10-25T00:00:00.000Z',
        end: '2026-11-01T00:00:00.000Z',
      });
    });
  });

  it('resolving later names a different window: which is why recovery restores the sealed one', () => {
    const sealed = resolveWindow(rolling(7), at('2026-11-29T23:59:00Z'));
    const later = resolveWindow(rolling(7), at('2026-11-30T00:01:00Z'));
    expect(later).not.toEqual(sealed);
  });

  it.each([
    [rolling(0), new Date()],
    [rolling(367), new Date()],
    [rolling(1.5), new Date()],
    [{ kind: 'rolling', days: 1, boundary: 'week' } as unknown as WindowPolicy, new Date()],
    [rolling(7), new Date(Number.NaN)],
    [rolling(7), at('1970-01-03T00:00:00Z')],
    [{ kind: 'sliding' } as unknown as WindowPolicy, new Date()],
  ])('refuses %j at %s', (policy, now) => {
    expect(() => resolveWindow(policy, now)).toThrow(expect.objectContaining({ code: 'delivery.window_invalid' }));
  });
});

describe('sealed windows', () => {
  const window = { start: '2026-11-01T00:00:00.000Z', end: '2026-11-02T00:00:00.000Z' };

  it('accepts the canonical form only', () => {
    expect(validateSealedWindow({ ...window, extra: 1 })).toEqual(window);
    for (const bad of [
      { start: '2026-11-01T00:00:00Z', end: window.end },
      { start: window.start, end: '2026-11-02T00:00:00.000+00:00' },
      { start: window.end, end: window.start },
      { start: window.start, end: window.start },
      { start: window.start },
      null,
      '2026-11-01/2026-11-02',
    ]) {
      expect(() => validateSealedWindow(bad)).toThrow(expect.objectContaining({ code: 'delivery.window_invalid' }));
    }
    expect(() => validateSealedWindow(null, 'delivery.recovery_journal_inconsistent')).toThrow(
      expect.objectContaining({ code: 'delivery.recovery_journal_inconsistent' }),
    );
  });

  it('closed when its end is at or before now', () => {
    expect(windowIsClosed(window, at('2026-11-02T00:00:00.000Z'))).toBe(true);
    expect(windowIsClosed(window, at('2026-11-01T23:59:59.999Z'))).toBe(false);
    expect(() => assertWindowClosed(window, at('2026-11-01T12:00:00Z'))).toThrow(
      expect.objectContaining({ code: 'delivery.window_not_closed' }),
    );
    expect(() => assertWindowClosed(window, at('2026-11-03T00:00:00Z'))).not.toThrow();
  });

  it('contains [start, end)', () => {
    expect(windowContains(window, at(window.start))).toBe(true);
    expect(windowContains(window, at('2026-11-01T23:59:59.999Z'))).toBe(true);
    expect(windowContains(window, at(window.end))).toBe(false);
    expect(windowContains(window, at('2026-10-31T23:59:59.999Z'))).toBe(false);
  });
});
