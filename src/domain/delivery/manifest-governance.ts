import type { Checker, Segment } from './manifest-checker.js';
import type { QualityDocument } from './manifest-schema.js';
import { isRecord } from './manifest-shape.js';
import { DEFAULT_OBSERVE_DEADLINE_S, DEFAULT_REPLAY_WINDOW_DAYS, type QualityGovernance } from './manifest-types.js';

/**
 * Quality governance settings of a v2 route (a clickhouse exchange target):
 *
 * ```yaml
 * quality:
 *   capsule: v2                   # required for a clickhouse target; the only version a route declares
 *   target_observation:           # optional
 *     deadline_s: 240             # 1..600, default 240
 *     keeper_no_node_retry:       # optional; absent = off (no retry)
 *       max_attempts: 2           # 1..3
 *       max_elapsed_ms: 5000      # 1..10000
 *   replay_window_days: 14        # optional; 1..35, default 14
 * ```
 *
 * The capsule is explicit (no implicit upgrade of a route); enabling the retry or changing
 * any setting changes the manifest and so the sealed authority: it is a new operation.
 * Their shapes are QualitySchema's (manifest-schema.ts).
 */

/** Keys under `quality` that only a v2 route may carry. */
export const V2_QUALITY_KEYS = ['capsule', 'target_observation', 'replay_window_days'] as const;

/** Keys that would let a required probe pass as a warning or not run. */
const DEGRADING_KEYS = ['severity', 'warn_if', 'required', 'enabled'] as const;

/**
 * Before the shape, on a v2 quality block or assertion: reports the degrading keys and
 * removes them (so they are not reported again as unknown). `required: true` and
 * `enabled: true` state what is so anyway and are accepted as no-ops; any other value of
 * them, and `severity` or `warn_if` with any value, is `quality.required_cannot_degrade`.
 */
export function refuseDegrading(map: unknown, path: Segment[], check: Checker): void {
  if (!isRecord(map)) return;
  for (const key of DEGRADING_KEYS) {
    if (!Object.hasOwn(map, key)) continue;
    if (key === 'severity' || key === 'warn_if') {
      check.add(
        [...path, key],
        'required quality never degrades to a warning: severities and warning thresholds are refused',
        'quality.required_cannot_degrade',
      );
    } else if (map[key] !== true) {
      check.add(
        [...path, key],
        'must be true if given: every probe of a v2 route is required and runs',
        'quality.required_cannot_degrade',
      );
    }
    delete map[key];
  }
}

/** A v2 route declares its capsule, and never turns the row count against the sealed receipts off. */
export function checkGovernance(quality: Record<string, unknown>, path: Segment[], check: Checker): void {
  if (!Object.hasOwn(quality, 'capsule'))
    check.add(
      [...path, 'capsule'],
      'is required for a clickhouse exchange target: declare capsule: v2',
      'quality.capsule_version_required',
    );
  // The published generation must hold exactly the sealed receipts' rows, and a
  // governed route may not turn that check off (the other rules choose WHAT to check).
  if (quality.row_count_matches_receipts === false) {
    check.add(
      [...path, 'row_count_matches_receipts'],
      'must be true on a governed (capsule v2) route: the row count against the sealed receipts is never turned off',
      'quality.required_cannot_degrade',
    );
  }
}

/** The governance plan of a parsed v2 quality block, its defaults filled in. */
export function governancePlanOf(q: QualityDocument): QualityGovernance {
  const retry = q.target_observation?.keeper_no_node_retry;
  return {
    capsule: 2,
    observeDeadlineS: q.target_observation?.deadline_s ?? DEFAULT_OBSERVE_DEADLINE_S,
    ...(retry && { keeperNoNodeRetry: { maxAttempts: retry.max_attempts, maxElapsedMs: retry.max_elapsed_ms } }),
    replayWindowDays: q.replay_window_days ?? DEFAULT_REPLAY_WINDOW_DAYS,
  };
}
