import type { QualityGovernance, SelectedRoute } from '../domain/delivery/manifest-types.js';
import { INVOCATION_RANDOM_BYTES, invocationIdFrom } from '../domain/delivery/identifiers.js';
import { sha256Hex } from '../domain/digest.js';
import type { AdmissionPlan } from '../domain/quality/core.js';
import { QualityRefusalError } from '../domain/quality/errors.js';
import { originalProbes } from '../domain/quality/probes.js';

/**
 * The effective plan a governed route admits (docs/rules.md#immutable-core, N22):
 * the original probes after defaults, every one required, the observation deadline, the
 * reap bound, the read-only retry policy and the replay window. Computed the same way at
 * PREPARE (sealed in the core) and by replay/diagnose (recomputed and compared).
 */

/**
 * Bounded reader: SIGTERM, then SIGKILL after this grace, then wait this long for the exit
 * (docs/rules.md#bounded-reader).
 */
export const TERM_GRACE_MS = 1000;
export const REAP_BOUND_MS = 3000;

export function routeGovernanceOf(route: SelectedRoute): QualityGovernance {
  const governance = route.route.quality.governance;
  if (!governance)
    throw new QualityRefusalError(
      'quality.capsule_version_required',
      `route ${route.name} is not a governed (quality.capsule: v2) route`,
    );
  return governance;
}

export function admissionPlanOf(route: SelectedRoute, receiptsTotal: number): AdmissionPlan {
  const governance = routeGovernanceOf(route);
  const { quality, target } = route.route;
  const retry = governance.keeperNoNodeRetry;
  return {
    probes: originalProbes({ rules: quality, keyColumns: target.keyColumns, receiptsTotal }),
    observeDeadlineSeconds: governance.observeDeadlineS,
    reapBoundMs: REAP_BOUND_MS,
    retry: retry
      ? { kind: 'keeper_no_node', maxAttempts: retry.maxAttempts, maxElapsedMs: retry.maxElapsedMs }
      : { kind: 'off' },
    replayWindowDays: governance.replayWindowDays,
  };
}

/**
 * A run's opaque id: `run-` + 26 base32 characters of SHA-256 over the fence's session (an
 * execution ARN's session, a CLI session). The session itself is never printed.
 */
export function runIdOf(session: string): string {
  // The invocation id's encoding (128 bits, 26 base32 characters), over the session's digest.
  const digest = Buffer.from(sha256Hex(`cutpoint.run.v1\0${session}`).slice(0, INVOCATION_RANDOM_BYTES * 2), 'hex');
  return `run-${invocationIdFrom(new Uint8Array(digest)).slice('inv-'.length)}`;
}

/** The original load's opaque id: digest of the candidate's UUID and the load receipts' digest (what was loaded where). */
export function loadIdOf(candidateUuid: string, loadDigest: string): string {
  return `load-${sha256Hex(`cutpoint.load.v1\0${candidateUuid}\0${loadDigest}`).slice(0, 26)}`;
}
