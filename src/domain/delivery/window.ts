import { ValidationError } from '../errors.js';

/**
 * Delivery windows (docs/rules.md#delivery-windows): a bounded run moves exactly the source rows whose UTC time
 * column falls in one half-open window [start, end). The window is resolved ONCE, before
 * any source row I/O, and sealed into the journal with the recovery authority. Recovery
 * restores the sealed window and never calls `resolveWindow` again: a rolling policy
 * resolved later would name a different window ("cannot accidentally shift a rolling
 * seven-day scope"), and rows delivered under one window would be checked, published or
 * retired under another.
 *
 * Everything here is UTC epoch arithmetic. A UTC day is always 86,400,000 ms (JavaScript
 * time has no leap seconds and UTC has no DST), so no local time zone can shift a window.
 */

/** A fixed window names its exact bounds; a rolling window ends at the last boundary <= now. */
export type WindowPolicy =
  { kind: 'fixed'; start: string; end: string } | { kind: 'rolling'; days: number; boundary: RollingBoundary };

export const ROLLING_BOUNDARIES = ['day', 'hour'] as const;
export type RollingBoundary = (typeof ROLLING_BOUNDARIES)[number];

/** A year and a bit: longer scopes belong in several bounded runs, not one transaction. */
export const MAX_ROLLING_DAYS = 366;

/**
 * The resolved, sealed window: half-open [start, end), canonical ISO-8601 UTC with
 * millisecond precision (`2026-11-01T00:00:00.000Z`), so two processes that seal or
 * compare it see byte-identical strings.
 */
export interface SealedWindow {
  start: string;
  end: string;
}

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/**
 * Authored timestamps: exact UTC with a literal `Z`, seconds required, up to millisecond
 * fractions. Offsets (`+01:00`) and zone-less forms are refused because their meaning
 * depends on where they are read; more than three fraction digits would be silently
 * truncated by the millisecond clock.
 */
const AUTHORED_UTC = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,3}))?Z$/;
const CANONICAL_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/**
 * Epoch milliseconds of an authored UTC timestamp, or undefined when it is not one.
 * Calendar-checked: `2026-02-30T00:00:00Z` and `T24:00:00Z` are refused rather than
 * rolled over to another day.
 */
export function parseUtcTimestamp(text: string): number | undefined {
  const m = AUTHORED_UTC.exec(text);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const millis = Number((m[7] ?? '').padEnd(3, '0'));
  if (year < 1970) return undefined;
  const ms = Date.UTC(year, month - 1, day, hour, minute, second, millis);
  const d = new Date(ms);
  const sameFields =
    d.getUTCFullYear() === year &&
    d.getUTCMonth() === month - 1 &&
    d.getUTCDate() === day &&
    d.getUTCHours() === hour &&
    d.getUTCMinutes() === minute &&
    d.getUTCSeconds() === second;
  return sameFields ? ms : undefined;
}

/** The canonical sealed form of an epoch-millisecond instant. */
export function canonicalUtc(ms: number): string {
  return new Date(ms).toISOString();
}

/**
 * Resolves a policy to its exact window. Called once per invocation, before source I/O;
 * the result is sealed and recovery reads it back instead of calling this again.
 * - fixed: the authored bounds, canonicalized; `now` is not consulted.
 * - rolling: `days` whole UTC days ending at the last `boundary` (UTC midnight, or the top
 *   of a UTC hour) at or before `now`. At exactly a boundary the window ends at `now`.
 */
export function resolveWindow(policy: WindowPolicy, now: Date): SealedWindow {
  if (policy.kind === 'fixed') {
    const start = parseUtcTimestamp(policy.start);
    const end = parseUtcTimestamp(policy.end);
    if (start === undefined || end === undefined) {
      throw new ValidationError(
        'delivery.window_invalid',
        'fixed window bounds must be exact UTC timestamps ending in Z',
      );
    }
    if (start >= end) throw new ValidationError('delivery.window_invalid', 'fixed window start must be before its end');
    return { start: canonicalUtc(start), end: canonicalUtc(end) };
  }
  if (policy.kind !== 'rolling') {
    throw new ValidationError('delivery.window_invalid', 'window kind must be fixed or rolling');
  }
  const nowMs = now instanceof Date ? now.getTime() : Number.NaN;
  if (!Number.isFinite(nowMs)) throw new ValidationError('delivery.window_invalid', 'now must be a valid instant');
  if (!Number.isInteger(policy.days) || policy.days < 1 || policy.days > MAX_ROLLING_DAYS) {
    throw new ValidationError('delivery.window_invalid', `rolling days must be an integer in [1, ${MAX_ROLLING_DAYS}]`);
  }
  if (!(ROLLING_BOUNDARIES as readonly string[]).includes(policy.boundary)) {
    throw new ValidationError('delivery.window_invalid', 'rolling boundary must be day or hour');
  }
  const unit = policy.boundary === 'day' ? DAY_MS : HOUR_MS;
  // Epoch 0 is a UTC midnight, so flooring epoch milliseconds is flooring UTC wall time.
  const end = Math.floor(nowMs / unit) * unit;
  const start = end - policy.days * DAY_MS;
  if (start < 0) throw new ValidationError('delivery.window_invalid', 'rolling window would start before 1970-01-01');
  return { start: canonicalUtc(start), end: canonicalUtc(end) };
}

/**
 * Checks a window read back from the journal (or handed to a step): both bounds in the
 * canonical sealed form and start < end. A window that fails this is never "repaired" by
 * re-resolving the policy; the caller reports the journal as inconsistent.
 */
export function validateSealedWindow(value: unknown, code = 'delivery.window_invalid'): SealedWindow {
  const w = value as Partial<SealedWindow> | null;
  const ok = (s: unknown): s is string =>
    typeof s === 'string' &&
    CANONICAL_UTC.test(s) &&
    parseUtcTimestamp(s) !== undefined &&
    canonicalUtc(parseUtcTimestamp(s) as number) === s;
  if (!w || typeof w !== 'object' || !ok(w.start) || !ok(w.end)) {
    throw new ValidationError(code, 'sealed window bounds must be canonical UTC timestamps (YYYY-MM-DDTHH:MM:SS.sssZ)');
  }
  if (w.start >= w.end) throw new ValidationError(code, 'sealed window start must be before its end');
  return { start: w.start, end: w.end };
}

/**
 * A window is closed when its end is at or before `now`: every source row it can ever
 * contain has a time at or before now. Runners that deliver a fixed window can refuse an
 * open one (late rows would miss the sealed run); rolling windows are closed by design.
 */
export function windowIsClosed(window: SealedWindow, now: Date): boolean {
  return Date.parse(window.end) <= now.getTime();
}

export function assertWindowClosed(window: SealedWindow, now: Date): void {
  if (!windowIsClosed(window, now)) {
    throw new ValidationError('delivery.window_not_closed', `window ending ${window.end} has not closed yet`);
  }
}

/** True when the UTC instant `at` lies in the half-open window. */
export function windowContains(window: SealedWindow, at: Date): boolean {
  const t = at.getTime();
  return Date.parse(window.start) <= t && t < Date.parse(window.end);
}
