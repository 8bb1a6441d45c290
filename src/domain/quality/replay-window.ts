import type { CapsuleV2 } from './capsule.js';
import { DEFAULT_REPLAY_WINDOW_DAYS } from '../delivery/manifest-types.js';
import { REPLAY_WINDOW_MAX_DAYS } from './core.js';
import { QualityActionNotPermittedError, QualityRefusalError, ReplayWindowClosedError } from './errors.js';
import { malformed } from './shape.js';

/**
 * The replay window (docs/rules.md#successors-and-replay-window, N19): it ends at completion.at
 * + replay_window_days (default 14, at most 35). It closes by a recorded boundary (a
 * successor's Begin, reason `successor`), by the clock (reason `expired`), or — when an older
 * writer took the released slot without writing a boundary — as `boundary_missing`. Nothing
 * else opens or extends it: an archival report object is not an input here at all.
 */

const DAY_MS = 86_400_000;

/** The effective window length: default 14 days, refused outside 1..35. */
export function replayWindowDaysOf(configured: number | undefined): number {
  if (configured === undefined) return DEFAULT_REPLAY_WINDOW_DAYS;
  if (!Number.isSafeInteger(configured) || configured < 1 || configured > REPLAY_WINDOW_MAX_DAYS) {
    throw new QualityRefusalError(
      'quality.admission_invalid',
      `replay_window_days must be an integer in [1, ${REPLAY_WINDOW_MAX_DAYS}]`,
    );
  }
  return configured;
}

function instantMs(value: string, path: string): number {
  const t = typeof value === 'string' ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(t)) throw malformed(path, 'expected an ISO-8601 instant');
  return t;
}

/** completion.at + days, as an ISO instant (what the release leg stores as replay.windowEndsAt). */
export function windowEndOf(completionAt: string, days: number): string {
  return new Date(instantMs(completionAt, 'completion.at') + replayWindowDaysOf(days) * DAY_MS).toISOString();
}

export type ReplayWindow =
  | { closed: false; endsAt: string }
  | { closed: true; endsAt: string; reason: 'successor' | 'expired' | 'boundary_missing'; closedAt: string | null };

export interface WindowInput {
  capsule: Pick<CapsuleV2, 'state' | 'completion' | 'replay'>;
  /** The sealed replay_window_days of this operation (admission plan). */
  days: number;
  /** The clock port's now. */
  now: string;
  /** The slot holds another generation/operation and no boundary names this one (older writer). */
  replacedWithoutBoundary?: boolean;
}

/** The window of a COMPLETE capsule; `undefined` when there is no completion (no window yet). */
export function replayWindowOf(input: WindowInput): ReplayWindow | undefined {
  const { capsule, days, now } = input;
  if (capsule.state !== 'COMPLETE' || capsule.completion === undefined) return undefined;
  const computed = windowEndOf(capsule.completion.at, days);
  const stored = capsule.replay.windowEndsAt;
  // The stored end was written from the same completion and days; a later one would extend the window.
  if (stored !== undefined && instantMs(stored, 'replay.windowEndsAt') !== instantMs(computed, 'window end')) {
    throw malformed('capsule.replay.windowEndsAt', 'differs from completion.at + replay_window_days');
  }
  const endsAt = computed;
  if (capsule.replay.closedAt !== undefined) {
    const reason = capsule.replay.reason;
    if (reason === undefined) throw malformed('capsule.replay.reason', 'missing on a closed window');
    return { closed: true, endsAt, reason, closedAt: capsule.replay.closedAt };
  }
  if (input.replacedWithoutBoundary === true)
    return { closed: true, endsAt, reason: 'boundary_missing', closedAt: null };
  if (instantMs(now, 'now') >= instantMs(endsAt, 'window end'))
    return { closed: true, endsAt, reason: 'expired', closedAt: null };
  return { closed: false, endsAt };
}

/** Refuses a replay outside the window (`quality.replay_window_closed` / `…_boundary_missing`). */
export function assertReplayWindowOpen(window: ReplayWindow | undefined): void {
  if (window === undefined) throw new QualityActionNotPermittedError('replay', []);
  if (!window.closed) return;
  const why =
    window.reason === 'successor'
      ? 'a successor operation recorded the boundary'
      : window.reason === 'expired'
        ? `the window ended at ${window.endsAt}`
        : 'the slot was taken without a boundary record (older writer)';
  throw new ReplayWindowClosedError(window.reason, `replay window closed: ${why}`);
}
