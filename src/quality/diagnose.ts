import { loadInvocation } from '../delivery/journal/records.js';
import { routeTargetId, workRootOf } from '../delivery/steps/common.js';
import type { Selector, SelectedRoute } from '../domain/delivery/manifest-types.js';
import { sealAuthority } from '../domain/delivery/sealed-authority.js';
import { sha256Hex } from '../domain/digest.js';
import { CutpointError } from '../domain/errors.js';
import {
  admissionDigest,
  authorityBindingDigest,
  immutableCoreDigest,
  inventoryDigest,
  policyDigest,
  probesDigest,
} from '../domain/quality/core.js';
import { diagnosisProjection, type ComparisonInputs, type Diagnosis } from '../domain/quality/diagnosis.js';
import { observationDiagnosticOf, type ClickHouseErrorClass } from '../domain/clickhouse-errors.js';
import { readPreparedDocument, type PreparedDocument } from '../domain/quality/evidence.js';
import type { OriginalProbe } from '../domain/quality/probes.js';
import type { ExchangeTargetPort, TableInventory } from '../ports/exchange-target.js';
import type { Ports } from '../ports/index.js';
import type { TargetPort } from '../ports/target.js';
import { namesOf } from '../publication/exchange-deps.js';
import { admissionPlanOf } from './admission.js';
import { completionWitnessFor, continuityOf } from './capsule-continuity.js';
import { readCapsule } from './capsule-store.js';
import { fetchEvidence } from './evidence.js';
import { NotGovernedError, readOnlyPorts } from './inspect.js';

export interface DiagnoseInput {
  invocationId: string;
  /** The manifest text as the operator supplies it now (compared, not required to match). */
  manifestText: string;
  selector: Selector | string;
}

/** Read-only: the stores (seen through readOnlyPorts), the target's identity, and one catalogue read of the target name. */
export interface DiagnoseDeps {
  ports: Ports;
  target: Pick<TargetPort, 'identity'>;
  exchange: Pick<ExchangeTargetPort, 'inventory'>;
  route: SelectedRoute;
}

/**
 * `cutpoint quality diagnose` (docs/rules.md#quality-commands, N22): every sealed digest of the capsule set
 * beside the same digest recomputed now — policy and admission from the manifest given,
 * inventory and generation from `system.columns` / `system.tables` of the table under the
 * TARGET name (before the dispatch that is the predecessor, so the generation does not
 * match yet), the authority binding from DescribeTable, the seal from the manifest,
 * selector, target identity and work root, the immutable core from all of them — plus
 * version continuity and the acceptance probes by name and columns. Nothing it cannot
 * recompute is guessed: `observed: null`, `match: "unknown"`. `last_error_code` is the
 * first refusal a live action would meet (evidence, continuity, a mismatch) or the last
 * observation's diagnostic. Writes nothing, reads no row value and no source.
 */
export async function diagnoseQuality(input: DiagnoseInput, deps: DiagnoseDeps): Promise<Diagnosis> {
  const ports = readOnlyPorts(deps.ports);
  const record = await loadInvocation(ports, input.invocationId);
  if (record.route !== deps.route.name || record.targetId !== routeTargetId(deps)) {
    throw new CutpointError(
      'Delivery.AuthorityMismatch',
      'delivery.recovery_authority_mismatch',
      'the route given is not the one the operation sealed; nothing was read further',
    );
  }
  const ref = { targetId: record.targetId, invocationId: record.invocationId };
  const capsule = await readCapsule(ports, ref);
  if (!capsule || capsule.schema !== 2) throw new NotGovernedError(record.invocationId);
  const errors: string[] = [];
  const attempt = async <T>(body: () => T | Promise<T>): Promise<T | null> => {
    try {
      return await body();
    } catch (error) {
      errors.push(error instanceof CutpointError ? error.code : 'quality.diagnosis_failed');
      return null;
    }
  };

  const prepared = await attempt(async (): Promise<PreparedDocument> => {
    const read = await fetchEvidence(ports.objects, capsule.prepared.key);
    if (read.status === 'absent')
      throw new CutpointError('Quality.EvidenceInvalid', 'quality.evidence_missing', 'prepared.json is missing');
    if (read.status === 'unreadable')
      throw new CutpointError('Quality.EvidenceInvalid', 'quality.evidence_unreadable', 'prepared.json is unreadable');
    return readPreparedDocument(read.bytes, capsule.prepared.sha256, capsule.coreDigest);
  });
  const rows = record.facts.parts?.rows;
  const plan = rows === undefined ? null : await attempt(() => admissionPlanOf(deps.route, rows));
  const names = namesOf(record.invocationId, deps);
  const onTarget: TableInventory | null = await attempt(() => deps.exchange.inventory(names.database, names.target));
  const parts = record.facts.parts;
  const observedInventory =
    onTarget && parts
      ? inventoryDigest({
          columns: onTarget.columns,
          engine: onTarget.engine,
          sortingKey: onTarget.sortingKey,
          loadReceiptsDigest: parts.digest,
          totalRows: parts.rows,
        })
      : null;
  const identity = await attempt(() => deps.target.identity());
  const seal =
    identity === null
      ? null
      : await attempt(
          () =>
            sealAuthority({
              invocationId: record.invocationId,
              manifestText: input.manifestText,
              selector: input.selector,
              route: deps.route,
              targetIdentity: identity,
              workRoot: workRootOf(deps),
              window: record.sealed.window,
            }).sealDigest,
        );
  const binding = await attempt(async () => authorityBindingDigest(await ports.authority.describeBinding()));
  const observed = {
    policy: await attempt(() => policyDigest(deps.route.route.quality)),
    admission: plan === null ? null : await attempt(() => admissionDigest(plan)),
    inventory: observedInventory,
    probes: plan === null ? null : probesDigest(plan.probes),
    authorityBinding: binding,
  };
  const candidateUuid = record.facts.candidate?.uuid;
  const core =
    observed.policy &&
    observed.admission &&
    observed.inventory &&
    observed.probes &&
    observed.authorityBinding &&
    seal &&
    candidateUuid
      ? immutableCoreDigest(
          {
            invocationId: record.invocationId,
            route: record.route,
            targetId: record.targetId,
            candidateUuid,
            sealDigest: seal,
          },
          { ...observed } as Record<keyof typeof observed, string>,
        )
      : null;
  const comparisons: ComparisonInputs = {
    policy: { sealed: capsule.digests.policy, observed: observed.policy },
    admission: { sealed: capsule.digests.admission, observed: observed.admission },
    inventory: { sealed: capsule.digests.inventory, observed: observed.inventory },
    generation: {
      sealed: sha256Hex(capsule.generation.candidateUuid.toLowerCase()),
      observed: onTarget ? sha256Hex(onTarget.uuid.toLowerCase()) : null,
    },
    immutable_core: { sealed: capsule.coreDigest, observed: core },
    seal: { sealed: record.sealed.sealDigest, observed: seal },
    authority_binding: { sealed: capsule.digests.authorityBinding, observed: binding },
  };

  const continuity = continuityOf(
    capsule,
    await completionWitnessFor(ports, record.route, record.invocationId, capsule),
  );
  if (continuity.continuity === 'rollback' || continuity.continuity === 'unknown') errors.push(continuity.code);
  errors.push(...mismatchCodes(comparisons, record.facts.publication !== undefined));
  const last = capsule.lastObservation?.errorClass;
  if (last !== undefined)
    errors.push(
      last === 'DEADLINE'
        ? 'quality.target_observation_timeout'
        : observationDiagnosticOf(last as ClickHouseErrorClass, 'target'),
    );
  const probes: readonly OriginalProbe[] = prepared?.plan.probes ?? plan?.probes ?? [];
  return diagnosisProjection({
    invocationId: record.invocationId,
    comparisons,
    continuity,
    probes,
    dataset: record.targetId,
    lastErrorCode: errors[0] ?? null,
  });
}

/** The code a live action would refuse with for each digest that was recomputed and differs. */
function mismatchCodes(c: ComparisonInputs, published: boolean): string[] {
  const differs = (name: keyof ComparisonInputs) =>
    c[name].observed !== null && c[name].sealed !== null && c[name].observed !== c[name].sealed;
  const codes: string[] = [];
  if (differs('seal')) codes.push('delivery.recovery_authority_mismatch');
  if (differs('authority_binding')) codes.push('quality.authority_replaced');
  // Before the publication the target name holds the predecessor: not a refusal yet.
  if (published && differs('generation')) codes.push('quality.generation_changed');
  if (differs('policy') || differs('admission') || differs('inventory') || differs('immutable_core'))
    codes.push('quality.core_digest_mismatch');
  return codes;
}
