import { durationSeconds, formatDuration } from './duration.js';
import { ValidationError } from './errors.js';
import { AttemptExpiredError, AttemptTimeFutureError } from './stream-errors.js';

/**
 * Attempt ids with a time mark, and the lane's attempt window (docs/stream-log.md "The stream log":
 * appends, GC retention). An attempt id may carry when it was minted: a segment `t` + 13
 * digits (unix milliseconds) delimited by `.` or `-` or the id's ends
 * (`wab12cd34.e3.t1765100000000.17`, `orders.t1765100000000-g0`); the first such segment
 * is the mark. Each lane has an attempt window — how long an attempt id may be re-run —
 * and every append path refuses a marked id older than `now − window`, before anything is
 * written. That is what lets GC forget the evidence of a marked attempt (its spent marker,
 * its collected record) once `now − window − margin` has passed it: every re-run is refused
 * by then, so none can take the missing evidence for a fresh attempt and append its batch
 * a second time. Unmarked ids are never refused by time, and their evidence is kept for good.
 */

/** Clock skew and step latency allowed: a mark may be this far ahead, and GC waits this much past the window. */
export const ATTEMPT_TIME_MARGIN_MS = 15 * 60 * 1000;
export const DEFAULT_ATTEMPT_WINDOW_SECONDS = 7 * 86400;
export const MIN_ATTEMPT_WINDOW_SECONDS = 3600;
export const MAX_ATTEMPT_WINDOW_SECONDS = 365 * 86400;

const MARK = /(?:^|[.-])t(\d{13})(?=$|[.-])/;
/** The smallest 13-digit mark: a leading zero is no time anyone minted (before 2001-09-09). */
const FIRST_MARK_MS = 1e12;

/** The attempt's time mark in unix milliseconds; undefined for an unmarked id (or one whose mark is no real time, refused by `validateAttemptTime`). */
export function timeMarkOf(attemptId: string): number | undefined {
  const digits = MARK.exec(attemptId)?.[1];
  if (digits === undefined) return undefined;
  const ms = Number(digits);
  return ms >= FIRST_MARK_MS ? ms : undefined;
}

/** Refuses an id whose first `t<13 digits>` segment is no real time (a leading zero), before anything is read. */
export function validateAttemptTime(attemptId: string): void {
  const digits = MARK.exec(attemptId)?.[1];
  if (digits !== undefined && Number(digits) < FIRST_MARK_MS) {
    throw new ValidationError(
      'stream.invalid_attempt',
      `attempt id ${attemptId}: its time mark t${digits} is not unix milliseconds of a real time (13 digits, no leading zero)`,
    );
  }
}

/** Input of `stream create --attempt-window` (a duration with its unit, 1h..365d) → seconds. */
export function parseAttemptWindow(value: unknown): number {
  const seconds = durationSeconds(value);
  if (seconds === undefined || seconds < MIN_ATTEMPT_WINDOW_SECONDS || seconds > MAX_ATTEMPT_WINDOW_SECONDS) {
    throw new ValidationError(
      'stream.invalid_attempt_window',
      'the attempt window must be a duration with its unit from 1h to 365d, like 6h or 7d (no spaces)',
    );
  }
  return seconds;
}

/** A lane's window from its head; a head created before lanes had one gets the default. */
export function attemptWindowOf(head: { attemptWindowSeconds?: number } | Readonly<Record<string, unknown>>): number {
  const stored = (head as { attemptWindowSeconds?: unknown }).attemptWindowSeconds;
  return typeof stored === 'number' && Number.isSafeInteger(stored) && stored > 0
    ? stored
    : DEFAULT_ATTEMPT_WINDOW_SECONDS;
}

/**
 * Every append path's check, before it writes anything for the attempt: a marked id older
 * than `now − window` is Stream.AttemptExpired, one more than the margin ahead of `now`
 * Stream.AttemptTimeFuture. An unmarked id passes.
 */
export function assertAttemptInWindow(attemptId: string, windowSeconds: number, now: Date): void {
  assertNotFuture(attemptId, now);
  if (attemptExpired(attemptId, windowSeconds, now)) throw expiredError(attemptId, windowSeconds);
}

/** A marked id more than the margin ahead of `now` is Stream.AttemptTimeFuture (no window needed to tell). */
export function assertNotFuture(attemptId: string, now: Date): void {
  validateAttemptTime(attemptId);
  const mark = timeMarkOf(attemptId);
  if (mark !== undefined && mark > now.getTime() + ATTEMPT_TIME_MARGIN_MS) {
    throw new AttemptTimeFutureError(
      attemptId,
      new Date(mark).toISOString(),
      now.toISOString(),
      ATTEMPT_TIME_MARGIN_MS / 60_000,
    );
  }
}

/** Stream.AttemptExpired for a marked id; `next` replaces the default advice. */
export function expiredError(attemptId: string, windowSeconds: number, next?: string): AttemptExpiredError {
  return new AttemptExpiredError(
    attemptId,
    new Date(timeMarkOf(attemptId) ?? 0).toISOString(),
    formatDuration(windowSeconds),
    next,
  );
}

/** Expired: older than `now − window` (what `assertAttemptInWindow` refuses). */
export function attemptExpired(attemptId: string, windowSeconds: number, now: Date): boolean {
  const mark = timeMarkOf(attemptId);
  return mark !== undefined && mark < now.getTime() - windowSeconds * 1000;
}

/**
 * Past the window and the margin: every append path with a clock within the margin of this
 * one refuses the attempt for good, so GC may forget its evidence (once nothing is left under
 * its WAL prefix) and a resolve may lift a suspension it holds without a spent marker.
 * Unmarked ids never are.
 */
export function attemptSettledByWindow(attemptId: string, windowSeconds: number, now: Date): boolean {
  const mark = timeMarkOf(attemptId);
  return mark !== undefined && mark < now.getTime() - windowSeconds * 1000 - ATTEMPT_TIME_MARGIN_MS;
}

/** The time mark an id minted now carries: `t` and the clock's unix milliseconds. */
export function timeMarkSegment(now: Date): string {
  return `t${now.getTime()}`;
}
