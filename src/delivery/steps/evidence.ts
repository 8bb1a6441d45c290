import { evidenceObjectKeyOf, qualifiedNameText } from '../../domain/delivery/identifiers.js';
import { canonicalJson, sha256Hex } from '../../domain/digest.js';
import { putExact } from '../../objects/exact-object.js';
import { DELIVERY_CUT_POINTS } from '../cut-points.js';
import type { DeliveryDeps } from '../deps.js';
import type { PublicationGovernance } from '../publication-mode.js';
import { TransitionPreconditionError } from '../journal/errors.js';
import { type InvocationRecord } from '../journal/records.js';
import { recordFacts } from '../journal/transition.js';
import { loadForStep, output, parseStepInput, transitionIdOf, type StepOutput } from './common.js';
import { rereadOnStale } from './carried.js';

export const EVIDENCE_KIND = 'cutpoint.delivery-evidence.v1';

export interface EvidenceOutput extends StepOutput {
  evidenceKey?: string;
}

/**
 * The safe evidence document of a published invocation: opaque ids, the sealed window,
 * counts and digests — all read from the journal, so it is byte-identical on every
 * re-run (a crash between the PUT and the journal write is resolved by `putExact`
 * finding the exact same object). No credential, connection string, binding value or
 * source row is in it; authority digests are one-way.
 */
export function evidenceDocument(
  record: InvocationRecord,
  deps: DeliveryDeps,
  governance?: PublicationGovernance,
): Record<string, unknown> {
  const { facts, sealed } = record;
  const publication = facts.publication;
  if (!publication)
    throw new TransitionPreconditionError(`invocation ${record.invocationId} has no publication receipt recorded`);
  return {
    kind: EVIDENCE_KIND,
    schema_version: 1,
    invocation_id: record.invocationId,
    route: record.route,
    target_id: record.targetId,
    target_table: qualifiedNameText(deps.route.route.target.table),
    window: { start: sealed.window.start, end: sealed.window.end },
    authority: {
      seal_digest: sealed.sealDigest,
      manifest_digest: sealed.manifestDigest,
      selector_digest: sealed.selectorDigest,
    },
    staging: facts.staging
      ? { table: `${facts.staging.table.schema}.${facts.staging.table.table}`, object_id: facts.staging.objectId }
      : null,
    plan: facts.plan
      ? { key: facts.plan.key, sha256: facts.plan.sha256, parts: facts.plan.parts, part_rows: facts.plan.partRows }
      : null,
    parts: facts.parts
      ? {
          count: facts.parts.parts,
          chunks: facts.parts.chunks,
          rows: facts.parts.rows,
          bytes: facts.parts.bytes,
          digest: facts.parts.digest,
        }
      : null,
    publication: {
      mode: publication.mode,
      rows: publication.rows,
      digest: publication.digest,
      staging_object_id: publication.stagingObjectId,
      published_at: publication.publishedAt,
    },
    // The publication's governance, as final as the publication (an exchange route: the
    // COMPLETE capsule's core and completion witness).
    ...governance?.evidence,
  };
}

/**
 * Step 8: persist the evidence as an S3 object generation (`evidenceObjectKeyOf`,
 * `putExact` at `delivery.evidence.put`) and journal its key and SHA-256 — in PUBLISHED,
 * before the checkpoint may advance (advanceCheckpoint requires it). Acts only in
 * PUBLISHED without recorded evidence.
 */
async function persistEvidenceOnce(input: unknown, deps: DeliveryDeps): Promise<EvidenceOutput> {
  const step = parseStepInput(input);
  const { record, ref, custody: heldCustody } = await loadForStep(step, deps);
  if (record.state !== 'PUBLISHED' || record.facts.evidence) {
    return {
      ...output(step, record, false),
      ...(record.facts.evidence ? { evidenceKey: record.facts.evidence.key } : {}),
    };
  }
  // Only once the mode's governance allows it (an exchange route: a COMPLETE capsule with
  // its completion evidence: docs/publication.md 'ClickHouse publication and quality governance').
  const governance = await deps.mode.governance(deps, ref);
  const custody = await heldCustody();
  const bytes = Buffer.from(canonicalJson(evidenceDocument(record, deps, governance)), 'utf8');
  const sha256 = sha256Hex(bytes);
  const key = evidenceObjectKeyOf(record.route, record.invocationId);
  await putExact(deps.ports.objects, DELIVERY_CUT_POINTS.evidencePut, key, bytes, {
    sha256,
    invocation: record.invocationId,
    kind: EVIDENCE_KIND,
  });
  const result = await recordFacts(deps.ports, ref, {
    state: 'PUBLISHED',
    fence: step.fence,
    transitionId: transitionIdOf('evidence', record.invocationId),
    patch: { evidence: { key, sha256 } },
    known: { invocation: record, custody },
    ...(governance ? { legs: governance.legs } : {}),
  });
  return { ...output(step, result.invocation, !result.alreadyApplied, custody), evidenceKey: key };
}

/** The step, deciding again from the journal when it refused or did nothing on a carried state (steps/carried.ts). */
export const persistEvidence = rereadOnStale(persistEvidenceOnce);
