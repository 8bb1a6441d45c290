import { canonicalJson } from '../digest.js';
import type { StoredCapsule } from './capsule.js';
import { assertContinuity, assertAuthorityBinding, type CompletionWitness } from './continuity.js';
import {
  EvidenceInvalidError,
  GenerationChangedError,
  QualityActionNotPermittedError,
  ReaderGuardHeldError,
} from './errors.js';
import type { OriginalProbe, ProbeResult } from './probes.js';
import { generationDigest, PROJECTION_SCHEMA_VERSION, shortDigest } from './projection.js';
import { assertReplayWindowOpen, type ReplayWindow } from './replay-window.js';

/**
 * The replay receipt (docs/rules.md#replay-receipt, N5, N21): a process-local document, never persisted by
 * cutpoint. It is built only when every check passed — COMPLETE capsule, released guard,
 * version continuity ok, authority binding match, current generation = published one,
 * original results all PASSED — so a receipt can never be produced from missing,
 * malformed or unreadable evidence (I9). Probe results are the ORIGINAL ones from
 * completion.json (replay re-runs no probe); acceptance restates them with column names
 * and the dataset label only.
 */

export const RECEIPT_KIND = 'cutpoint.quality-replay-receipt.v1';

export interface ReceiptInput {
  invocationId: string;
  currentRunId: string;
  /** Read, never written, by replay. */
  dispatchCount: number;
  capsule: StoredCapsule;
  /** The original probes (verified prepared.json). */
  probes: readonly OriginalProbe[];
  /** The original results (verified completion.json), by probe name. */
  results: ReadonlyArray<{ name: string; result: ProbeResult }>;
  /** Dataset label `<binding>.<db>.<table>` (the targetId). */
  dataset: string;
  /** The completion.json witness as read and classified; v_o is the capsule's own version. */
  completion: CompletionWitness;
  /** replayWindowOf(...) for this capsule now. */
  replayWindow: ReplayWindow | undefined;
  authorityBinding: 'match' | 'replaced';
  /** toString(uuid) of the table under the target name now. */
  currentGenerationUuid: string;
}

export interface ReplayReceipt {
  acceptance: Array<{ columns: string[]; dataset: string; kind: string; probe: string; result: ProbeResult }>;
  authority: { binding: 'match'; completion_version: number; continuity: 'ok'; observed_version: number };
  current_run_id: string;
  dispatch_count: number;
  generation: { current: string; match: true; published: string };
  immutable_core: string;
  invocation_id: string;
  kind: typeof RECEIPT_KIND;
  quality: { governance: 'complete'; probes: Array<{ name: string; result: ProbeResult }> };
  reader_guard: 'released';
  replayed_from: { invocation_id: string; original_load_id: string; original_run_id: string };
  schema_version: typeof PROJECTION_SCHEMA_VERSION;
  source_reads: 0;
  target_writes: 0;
}

export function replayReceipt(input: ReceiptInput): ReplayReceipt {
  const { capsule } = input;
  if (capsule.schema !== 2 || capsule.state !== 'COMPLETE') throw new QualityActionNotPermittedError('replay', []);
  if (capsule.reader !== undefined) throw new ReaderGuardHeldError();
  if (input.dispatchCount !== 1) throw new QualityActionNotPermittedError('replay', []);
  assertReplayWindowOpen(input.replayWindow);
  const continuity = assertContinuity({
    completion: input.completion,
    observedVersion: capsule.version,
    capsuleState: capsule.state,
    ...(capsule.completion
      ? {
          itemCompletion: {
            version: capsule.completion.version,
            evidenceRecorded: capsule.completion.evidence !== undefined,
          },
        }
      : {}),
  });
  assertAuthorityBinding(input.authorityBinding);
  if (input.currentGenerationUuid.toLowerCase() !== capsule.generation.candidateUuid)
    throw new GenerationChangedError();
  // The original results must name exactly the original probes, in order, all PASSED.
  const names = input.probes.map((p) => p.name);
  if (input.probes.length === 0 || canonicalJson(input.results.map((r) => r.name)) !== canonicalJson(names)) {
    throw new EvidenceInvalidError('malformed', 'the completion results do not name exactly the original probes');
  }
  if (input.results.some((r) => r.result !== 'PASSED')) {
    throw new EvidenceInvalidError('malformed', 'a COMPLETE capsule whose original results are not all PASSED');
  }
  const published = generationDigest(capsule.generation.candidateUuid);
  return JSON.parse(
    canonicalJson({
      acceptance: input.probes.map((p, i) => ({
        columns: [...p.columns],
        dataset: input.dataset,
        kind: p.kind,
        probe: p.name,
        result: input.results[i]!.result,
      })),
      authority: {
        binding: 'match',
        completion_version: continuity.completionVersion,
        continuity: 'ok',
        observed_version: continuity.observedVersion,
      },
      current_run_id: input.currentRunId,
      dispatch_count: input.dispatchCount,
      generation: { current: generationDigest(input.currentGenerationUuid), match: true, published },
      immutable_core: shortDigest(capsule.coreDigest),
      invocation_id: input.invocationId,
      kind: RECEIPT_KIND,
      quality: { governance: 'complete', probes: input.results.map((r) => ({ name: r.name, result: r.result })) },
      reader_guard: 'released',
      replayed_from: {
        invocation_id: input.invocationId,
        original_load_id: capsule.runs.originalLoadId,
        original_run_id: capsule.runs.originalRunId,
      },
      schema_version: PROJECTION_SCHEMA_VERSION,
      source_reads: 0,
      target_writes: 0,
    }),
  ) as ReplayReceipt;
}
