import type { Checker, Segment } from './manifest-checker.js';
import {
  DEFAULT_OBSERVE_DEADLINE_S,
  DEFAULT_REPLAY_WINDOW_DAYS,
  MAX_KEEPER_RETRY_ATTEMPTS,
  MAX_KEEPER_RETRY_ELAPSED_MS,
  MAX_OBSERVE_DEADLINE_S,
  MAX_REPLAY_WINDOW_DAYS,
  type KeeperNoNodeRetry,
  type QualityGovernance,
} from './manifest-types.js';

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
 */

/** Keys under `quality` that only a v2 route may carry. */
export const V2_QUALITY_KEYS = ['capsule', 'target_observation', 'replay_window_days'] as const;

/** Keys that would let a required probe pass as a warning or not run. */
const DEGRADING_KEYS = ['severity', 'warn_if', 'required', 'enabled'] as const;

/**
 * Reports the degrading keys of a v2 quality block or assertion and returns the keys it
 * handled (so they are not reported again as unknown). `required: true` and `enabled: true`
 * state what is so anyway and are accepted as no-ops; any other value of them, and
 * `severity` or `warn_if` with any value, is `quality.required_cannot_degrade`.
 */
export function refuseDegrading(map: Map<unknown, unknown>, path: Segment[], check: Checker): Set<string> {
  const handled = new Set<string>();
  for (const key of DEGRADING_KEYS) {
    if (!map.has(key)) continue;
    handled.add(key);
    if (key === 'severity' || key === 'warn_if') {
      check.add(
        [...path, key],
        'required quality never degrades to a warning: severities and warning thresholds are refused',
        'quality.required_cannot_degrade',
      );
    } else if (map.get(key) !== true) {
      check.add(
        [...path, key],
        'must be true if given: every probe of a v2 route is required and runs',
        'quality.required_cannot_degrade',
      );
    }
  }
  return handled;
}

/**
 * The governance plan from a quality block. `required`: the route is v2, so `capsule: v2`
 * must be present; otherwise (the route kind is unknown) only the shapes are checked.
 */
export function validateGovernance(
  map: Map<string, unknown>,
  path: Segment[],
  required: boolean,
  check: Checker,
): QualityGovernance | undefined {
  const before = check.issues.length;
  if (!map.has('capsule')) {
    if (required)
      check.add(
        [...path, 'capsule'],
        'is required for a clickhouse exchange target: declare capsule: v2',
        'quality.capsule_version_required',
      );
  } else if (map.get('capsule') !== 'v2') {
    check.add(
      [...path, 'capsule'],
      'must be v2 (the only quality capsule version a route can declare)',
      'quality.capsule_version_unsupported',
    );
  }
  let observeDeadlineS: number | undefined = DEFAULT_OBSERVE_DEADLINE_S;
  let keeperNoNodeRetry: KeeperNoNodeRetry | undefined;
  if (map.has('target_observation')) {
    const at = [...path, 'target_observation'];
    const observation = check.map(map.get('target_observation'), at, ['deadline_s', 'keeper_no_node_retry'], []);
    if (observation?.has('deadline_s'))
      observeDeadlineS = check.integer(observation.get('deadline_s'), [...at, 'deadline_s'], 1, MAX_OBSERVE_DEADLINE_S);
    if (observation?.has('keeper_no_node_retry'))
      keeperNoNodeRetry = validateRetry(
        observation.get('keeper_no_node_retry'),
        [...at, 'keeper_no_node_retry'],
        check,
      );
  }
  const replayWindowDays = map.has('replay_window_days')
    ? check.integer(map.get('replay_window_days'), [...path, 'replay_window_days'], 1, MAX_REPLAY_WINDOW_DAYS)
    : DEFAULT_REPLAY_WINDOW_DAYS;
  if (check.issues.length > before || observeDeadlineS === undefined || replayWindowDays === undefined)
    return undefined;
  return { capsule: 2, observeDeadlineS, ...(keeperNoNodeRetry && { keeperNoNodeRetry }), replayWindowDays };
}

/** Both bounds are required: an enabled retry is sealed with its exact bounds. */
function validateRetry(value: unknown, path: Segment[], check: Checker): KeeperNoNodeRetry | undefined {
  const map = check.map(value, path, ['max_attempts', 'max_elapsed_ms'], ['max_attempts', 'max_elapsed_ms']);
  if (!map) return undefined;
  const maxAttempts = map.has('max_attempts')
    ? check.integer(map.get('max_attempts'), [...path, 'max_attempts'], 1, MAX_KEEPER_RETRY_ATTEMPTS)
    : undefined;
  const maxElapsedMs = map.has('max_elapsed_ms')
    ? check.integer(map.get('max_elapsed_ms'), [...path, 'max_elapsed_ms'], 1, MAX_KEEPER_RETRY_ELAPSED_MS)
    : undefined;
  if (maxAttempts === undefined || maxElapsedMs === undefined) return undefined;
  return { maxAttempts, maxElapsedMs };
}
