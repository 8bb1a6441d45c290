import { canonicalJson } from '../digest.js';
import type { Continuity } from './continuity.js';
import { continuityLabel } from './continuity.js';
import type { OriginalProbe } from './probes.js';
import { PROJECTION_SCHEMA_VERSION, shortDigest } from './projection.js';

/**
 * `diagnose` (docs/rules.md#quality-commands, N22): read-only comparisons of the sealed digests with the ones
 * recomputed now, version continuity, and the acceptance probes restated with column
 * names and the dataset label only. No row values, no raw authority item, no UUID, no
 * token. An observed value the caller could not recompute is `null` and its match is
 * `"unknown"` — never `true`.
 */

export const DIAGNOSIS_KIND = 'cutpoint.quality-diagnosis.v1';
export const COMPARISON_NAMES = [
  'policy',
  'admission',
  'inventory',
  'generation',
  'immutable_core',
  'seal',
  'authority_binding',
] as const;
export type ComparisonName = (typeof COMPARISON_NAMES)[number];

/** Full hex digests: sealed (from the capsule / prepared.json) and observed (recomputed now, or null). */
export type ComparisonInputs = Record<ComparisonName, { sealed: string | null; observed: string | null }>;

export interface Diagnosis {
  acceptance: Array<{ columns: string[]; dataset: string; kind: string; probe: string }>;
  authority: {
    completion_version: number | null;
    continuity: 'ok' | 'rollback' | 'unknown';
    observed_version: number | null;
  };
  comparisons: Array<{
    match: boolean | 'unknown';
    name: ComparisonName;
    observed: string | null;
    sealed: string | null;
  }>;
  invocation_id: string;
  kind: typeof DIAGNOSIS_KIND;
  last_error_code: string | null;
  schema_version: typeof PROJECTION_SCHEMA_VERSION;
}

export interface DiagnosisInput {
  invocationId: string;
  comparisons: ComparisonInputs;
  continuity: Continuity | null;
  probes: readonly OriginalProbe[];
  dataset: string;
  lastErrorCode: string | null;
}

export function diagnosisProjection(input: DiagnosisInput): Diagnosis {
  const c = input.continuity;
  const versions =
    c === null
      ? { completion_version: null, observed_version: null }
      : c.continuity === 'ok' || c.continuity === 'rollback'
        ? { completion_version: c.completionVersion, observed_version: c.observedVersion }
        : { completion_version: null, observed_version: c.continuity === 'not_completed' ? c.observedVersion : null };
  return JSON.parse(
    canonicalJson({
      acceptance: input.probes.map((p) => ({
        columns: [...p.columns],
        dataset: input.dataset,
        kind: p.kind,
        probe: p.name,
      })),
      authority: { ...versions, continuity: c === null ? 'unknown' : continuityLabel(c) },
      comparisons: COMPARISON_NAMES.map((name) => {
        const { sealed, observed } = input.comparisons[name];
        return {
          match: sealed === null || observed === null ? 'unknown' : sealed === observed,
          name,
          observed: observed === null ? null : shortDigest(observed),
          sealed: sealed === null ? null : shortDigest(sealed),
        };
      }),
      invocation_id: input.invocationId,
      kind: DIAGNOSIS_KIND,
      last_error_code: input.lastErrorCode,
      schema_version: PROJECTION_SCHEMA_VERSION,
    }),
  ) as Diagnosis;
}
