import { rereadOnStale } from '../../delivery/steps/carried.js';
import { loadForStep, output, parseStepInput, transitionIdOf, type StepOutput } from '../../delivery/steps/common.js';
import type { DeliveryDeps } from '../../delivery/deps.js';
import { TransitionPreconditionError } from '../../delivery/journal/errors.js';
import { beginSessionOf } from '../../delivery/journal/records.js';
import { recordFacts, transition } from '../../delivery/journal/transition.js';
import { qualityEvidenceKeyOf } from '../../domain/delivery/identifiers.js';
import { canonicalDigest } from '../../domain/digest.js';
import { preparedDocument } from '../../domain/quality/evidence.js';
import { bindProbe, evaluateProbes } from '../../domain/quality/probes.js';
import { exchangeOf } from '../../publication/exchange-deps.js';
import { admissionPlanOf, loadIdOf, runIdOf } from '../admission.js';
import { capsulePutLeg, readCapsule, type CapsuleAttributes } from '../capsule-store.js';
import { QUALITY_CUT_POINTS } from '../../domain/quality/cut-points.js';
import { putEvidence } from '../evidence.js';

export interface PrepareOutput extends StepOutput {
  /** Names of the staged probes the candidate failed (empty: it passed). Names only, never values. */
  failures: string[];
}

/**
 * ClickHouse publication, before the dispatch: the staged quality (docs/rules.md#original-probes). The route's
 * original probes (ClickHouse SQL over `{relation}`, row_count expecting the SEALED receipts
 * total) run read-only on the exact candidate. All pass → the immutable core is sealed
 * (policy, admission, inventory of the candidate, probes, authority binding, the delivery
 * seal), `prepared.json` is written once (`quality.prepared.put`), and the capsule is created
 * PREPARED in the same transaction as its journal record (`quality.capsule.prepare`), still
 * in VERIFIED_EOF. Any probe failed or malformed → VERIFIED_EOF → REEXTRACT_REQUIRED: no
 * capsule, never dispatched (retire, then a new operation). Acts only in VERIFIED_EOF with a
 * recorded candidate and no capsule; everything it computes is deterministic, so a re-run
 * after a crash writes the same bytes and finds its own journal claim.
 */
async function prepareCapsuleOnce(input: unknown, deps: DeliveryDeps): Promise<PrepareOutput> {
  const step = parseStepInput(input);
  const { record, ref, custody: heldCustody } = await loadForStep(step, deps);
  const candidate = record.facts.candidate;
  if (record.state !== 'VERIFIED_EOF' || !candidate) return { ...output(step, record, false), failures: [] };
  if (await readCapsule(deps.ports, ref)) return { ...output(step, record, false), failures: [] };
  const parts = record.facts.parts;
  if (!parts) throw new TransitionPreconditionError(`invocation ${record.invocationId} has no verified parts`);
  const exchange = exchangeOf(deps);
  const custody = await heldCustody();
  const plan = admissionPlanOf(deps.route, parts.rows);
  const relation = { database: candidate.table.schema, table: candidate.table.table };
  const observed = await exchange.scalars(
    plan.probes.map((p) => ({ name: p.name, sql: bindProbe(p.sql, relation) })),
    { cutPoint: QUALITY_CUT_POINTS.stagedProbe },
  );
  const staged = evaluateProbes(plan.probes, observed);
  if (staged.outcome !== 'COMPLETE') {
    const failed = await transition(deps.ports, ref, {
      from: 'VERIFIED_EOF',
      to: 'REEXTRACT_REQUIRED',
      fence: step.fence,
      transitionId: transitionIdOf('quality-staged-failed', record.invocationId),
      known: { invocation: record, custody },
    });
    return { ...output(step, failed.invocation, !failed.alreadyApplied, custody), failures: staged.failed };
  }
  const described = await exchange.inventory(relation.database, relation.table);
  const inventory = {
    columns: described.columns,
    engine: described.engine,
    sortingKey: described.sortingKey,
    loadReceiptsDigest: parts.digest,
    totalRows: parts.rows,
  };
  const authorityBinding = await deps.ports.authority.describeBinding();
  const identity = {
    invocationId: record.invocationId,
    route: record.route,
    targetId: record.targetId,
    candidateUuid: candidate.uuid,
    sealDigest: record.sealed.sealDigest,
  };
  const resultsDigest = canonicalDigest({ kind: 'cutpoint.quality-staged-results.v1', results: staged.results });
  // prepared.json is written once under a create-only key, so its bytes must be the same
  // whichever session (re-)runs this step: the original run is the session that began the
  // operation (its journal's begin record), never the fence's session, which a takeover
  // changes (on S3 a recovery would otherwise conflict with its own first write forever).
  const runs = {
    originalRunId: runIdOf(await beginSessionOf(deps.ports, record.invocationId)),
    originalLoadId: loadIdOf(candidate.uuid, parts.digest),
  };
  const prepared = preparedDocument({
    ...identity,
    qualityBlock: deps.route.route.quality,
    plan: { ...plan, probes: [...plan.probes] },
    inventory,
    authorityBinding,
    stagedResults: staged.results,
    runs,
  });
  const key = qualityEvidenceKeyOf(record.route, record.invocationId, 'prepared');
  const put = await putEvidence(
    deps.ports.objects,
    QUALITY_CUT_POINTS.preparedPut,
    key,
    prepared.document,
    record.invocationId,
  );
  const capsule: CapsuleAttributes = {
    schema: 2,
    state: 'PREPARED',
    coreDigest: prepared.document.coreDigest,
    digests: prepared.document.digests,
    generation: { candidateUuid: candidate.uuid },
    prepared: { key, sha256: put.sha256 },
    staged: { passed: true, resultsDigest },
    runs,
    replay: {},
  };
  const result = await recordFacts(deps.ports, ref, {
    state: 'VERIFIED_EOF',
    fence: step.fence,
    transitionId: transitionIdOf('quality-prepare', record.invocationId),
    patch: {},
    cutPoint: QUALITY_CUT_POINTS.capsulePrepare,
    known: { invocation: record, custody },
    legs: [capsulePutLeg(ref, capsule)],
  });
  return { ...output(step, result.invocation, !result.alreadyApplied, custody), failures: [] };
}

/** The step, deciding again from the journal when it refused or did nothing on a carried state (steps/carried.ts). */
export const prepareCapsule = rereadOnStale(prepareCapsuleOnce);
