import type { AdmissionPlan, AuthorityBinding, Inventory } from '../domain/quality/core.js';
import type { CapsuleDigests } from '../domain/quality/capsule.js';
import type { ProbeResult } from '../domain/quality/probes.js';

export const PREPARED_KIND = 'cutpoint.quality-prepared.v1';

export interface PreparedInput {
  invocationId: string;
  route: string;
  targetId: string;
  candidateUuid: string;
  sealDigest: string;
  core: { coreDigest: string; digests: CapsuleDigests };
  plan: AdmissionPlan;
  inventory: Inventory;
  authorityBinding: AuthorityBinding;
  staged: ReadonlyArray<{ name: string; result: ProbeResult }>;
  resultsDigest: string;
  originalRunId: string;
  originalLoadId: string;
}

/**
 * `prepared.json`: everything the immutable core was sealed from, so observe and replay can
 * recompute the core digest from the evidence alone and compare it with the capsule's,
 * plus the original probes in full (their SQL over `{relation}` and sealed expectations) —
 * the probes a later observation evaluates on the published generation, never re-derived
 * from a manifest that may have changed. No row value, credential or connection string:
 * the probes' SQL is the operator's own configuration.
 */
export function preparedDocument(input: PreparedInput): Record<string, unknown> & { kind: string } {
  return {
    kind: PREPARED_KIND,
    schema_version: 1,
    invocation_id: input.invocationId,
    route: input.route,
    target_id: input.targetId,
    seal_digest: input.sealDigest,
    generation: { candidate_uuid: input.candidateUuid },
    core_digest: input.core.coreDigest,
    digests: input.core.digests,
    plan: {
      probes: input.plan.probes,
      observe_deadline_s: input.plan.observeDeadlineSeconds,
      reap_bound_ms: input.plan.reapBoundMs,
      retry: input.plan.retry,
      replay_window_days: input.plan.replayWindowDays,
    },
    inventory: {
      columns: input.inventory.columns,
      engine: input.inventory.engine,
      sorting_key: input.inventory.sortingKey,
      load_receipts_digest: input.inventory.loadReceiptsDigest,
      total_rows: input.inventory.totalRows,
    },
    authority_binding: input.authorityBinding,
    staged: { results: input.staged, results_digest: input.resultsDigest },
    runs: { original_run_id: input.originalRunId, original_load_id: input.originalLoadId },
  };
}
