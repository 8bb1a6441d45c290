import { describe, expect, it } from 'vitest';
import {
  assertAttemptInWindow,
  assertNotFuture,
  ATTEMPT_TIME_MARGIN_MS,
  attemptExpired,
  attemptSettledByWindow,
  attemptWindowOf,
  DEFAULT_ATTEMPT_WINDOW_SECONDS,
  parseAttemptWindow,
  timeMarkOf,
  timeMarkSegment,
} from '../../src/domain/attempt-time.js';
import { durationSeconds, formatDuration } from '../../src/domain/duration.js';
import { validateAttemptId } from '../../src/domain/stream.js';

/** Time-marked attempt ids and the attempt window (src/domain/attempt-time.ts): pure rules. */
const T = 1_765_100_000_000;
const at = (ms: number) => new Date(ms);
const DAY = 86_400_000;

describe('the time mark of an attempt id', () => {
  it("is the first segment t<13 digits>, delimited by . or - or the id's ends", () => {
    expect(timeMarkOf(`wab12cd34.e3.t${T}.17`)).toBe(T);
    expect(timeMarkOf(`orders.t${T}-g0`)).toBe(T);
    expect(timeMarkOf(`t${T}`)).toBe(T);
    expect(timeMarkOf(`t${T}-g12`)).toBe(T);
    expect(timeMarkOf(`load-t${T}`)).toBe(T);
    // The first one counts.
    expect(timeMarkOf(`a.t${T}.t${T + 5}`)).toBe(T);
    expect(timeMarkOf(`a-t${T + 5}.t${T}`)).toBe(T + 5);
  });

  it('anything else is unmarked: another length, no delimiter, another delimiter, another letter', () => {
    for (const id of [
      'a1',
      'orders-g0',
      `xt${T}`,
      `a.t${T}x`,
      `a.t${T}0`,
      `a.t${String(T).slice(1)}`,
      `a_t${T}`,
      `a.T${T}`,
      `a.t${T}_1`,
      `a/t${T}`,
      'w12345678.e1.7',
    ]) {
      expect(timeMarkOf(id), id).toBeUndefined();
    }
  });

  it('a mark with a leading zero is no real time: refused as an attempt id, never read as unmarked or as 1970', () => {
    expect(() => validateAttemptId('a.t0765100000000')).toThrow(
      expect.objectContaining({ name: 'Cutpoint.ValidationError', code: 'stream.invalid_attempt' }),
    );
    expect(() => assertNotFuture('a.t0000000000000-g1', at(T))).toThrow(
      expect.objectContaining({ code: 'stream.invalid_attempt' }),
    );
    expect(timeMarkOf('a.t0765100000000')).toBeUndefined();
    // The first t-segment decides: a valid later one does not rescue a bad first one.
    expect(() => validateAttemptId(`a.t0765100000000.t${T}`)).toThrow(
      expect.objectContaining({ code: 'stream.invalid_attempt' }),
    );
    expect(validateAttemptId(`a.t${T}`)).toBe(`a.t${T}`);
  });

  it("a minted mark is the clock's unix milliseconds, and reads back", () => {
    expect(timeMarkSegment(at(T))).toBe(`t${T}`);
    expect(timeMarkOf(`w1.e1.${timeMarkSegment(at(T))}.1`)).toBe(T);
  });
});

describe('the attempt window', () => {
  const W = 7 * 86_400;

  it('refuses a marked id older than now − window (stream.attempt_expired) and one more than 15 minutes ahead (stream.attempt_time_future)', () => {
    const id = `o.t${T}`;
    expect(() => assertAttemptInWindow(id, W, at(T))).not.toThrow();
    expect(() => assertAttemptInWindow(id, W, at(T + 7 * DAY))).not.toThrow();
    expect(() => assertAttemptInWindow(id, W, at(T + 7 * DAY + 1))).toThrow(
      expect.objectContaining({ name: 'Stream.AttemptExpired', code: 'stream.attempt_expired' }),
    );
    expect(() => assertAttemptInWindow(id, W, at(T - ATTEMPT_TIME_MARGIN_MS))).not.toThrow();
    expect(() => assertAttemptInWindow(id, W, at(T - ATTEMPT_TIME_MARGIN_MS - 1))).toThrow(
      expect.objectContaining({ name: 'Stream.AttemptTimeFuture', code: 'stream.attempt_time_future' }),
    );
    expect(() => assertNotFuture(id, at(T - ATTEMPT_TIME_MARGIN_MS - 1))).toThrow(
      expect.objectContaining({ code: 'stream.attempt_time_future' }),
    );
    // Unmarked ids are never refused by time.
    expect(() => assertAttemptInWindow('a1', W, at(T + 400 * DAY))).not.toThrow();
  });

  it("the refusal names the window and where the records' fate is", () => {
    let message = '';
    try {
      assertAttemptInWindow(`o.t${T}`, 2 * 86_400, at(T + 3 * DAY));
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain('attempt window of 2d');
    expect(message).toContain(new Date(T).toISOString());
    expect(message).toContain('commit records');
    expect(message).toContain('nothing was written');
  });

  it('evidence may be forgotten only past window + margin; expired and settled agree on the boundary', () => {
    const id = `o.t${T}`;
    expect(attemptExpired(id, W, at(T + 7 * DAY))).toBe(false);
    expect(attemptExpired(id, W, at(T + 7 * DAY + 1))).toBe(true);
    expect(attemptSettledByWindow(id, W, at(T + 7 * DAY + 1))).toBe(false);
    expect(attemptSettledByWindow(id, W, at(T + 7 * DAY + ATTEMPT_TIME_MARGIN_MS))).toBe(false);
    expect(attemptSettledByWindow(id, W, at(T + 7 * DAY + ATTEMPT_TIME_MARGIN_MS + 1))).toBe(true);
    // Whatever settles an attempt, every append path refuses it too.
    for (const now of [T + 7 * DAY + ATTEMPT_TIME_MARGIN_MS + 1, T + 400 * DAY]) {
      expect(attemptSettledByWindow(id, W, at(now))).toBe(true);
      expect(() => assertAttemptInWindow(id, W, at(now))).toThrow(
        expect.objectContaining({ code: 'stream.attempt_expired' }),
      );
      // A clock up to the margin behind still refuses it.
      expect(() => assertAttemptInWindow(id, W, at(now - ATTEMPT_TIME_MARGIN_MS))).toThrow(
        expect.objectContaining({ code: 'stream.attempt_expired' }),
      );
    }
    expect(attemptExpired('a1', W, at(T + 400 * DAY))).toBe(false);
    expect(attemptSettledByWindow('a1', W, at(T + 400 * DAY))).toBe(false);
  });

  it('is a duration with its unit from 1h to 365d; a lane without one has 7 days', () => {
    expect(parseAttemptWindow('1h')).toBe(3600);
    expect(parseAttemptWindow('7d')).toBe(604_800);
    expect(parseAttemptWindow('365d')).toBe(365 * 86_400);
    expect(parseAttemptWindow('90m')).toBe(5400);
    for (const bad of ['59m', '3599s', '366d', '7', 7, '', ' 7d', '7d ', '1.5h', '-1d', null, undefined, {}]) {
      expect(() => parseAttemptWindow(bad), String(bad)).toThrow(
        expect.objectContaining({ name: 'Cutpoint.ValidationError', code: 'stream.invalid_attempt_window' }),
      );
    }
    expect(attemptWindowOf({})).toBe(DEFAULT_ATTEMPT_WINDOW_SECONDS);
    expect(DEFAULT_ATTEMPT_WINDOW_SECONDS).toBe(604_800);
    expect(attemptWindowOf({ attemptWindowSeconds: 3600 })).toBe(3600);
  });

  it('durations read and print in the same units', () => {
    expect(durationSeconds('36h')).toBe(129_600);
    expect(durationSeconds('36')).toBeUndefined();
    expect(formatDuration(604_800)).toBe('7d');
    expect(formatDuration(129_600)).toBe('36h');
    expect(formatDuration(5400)).toBe('90m');
    expect(formatDuration(61)).toBe('61s');
    expect(formatDuration(0)).toBe('0s');
  });
});
