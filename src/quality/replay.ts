import { randomBytes } from 'node:crypto';
import { loadInvocation } from '../delivery/journal/records.js';
import { routeTargetId, workRootOf } from '../delivery/steps/common.js';
import type { Selector, SelectedRoute } from '../domain/delivery/manifest-types.js';
import { assertAuthority, recomputeAuthority } from '../domain/delivery/sealed-authority.js';
import { CutpointError } from '../domain/errors.js';
import { compareAuthorityBinding } from '../domain/quality/continuity.js';
import {
  CompletionEvidencePendingError,
  EvidenceInvalidError,
  QualityActionNotPermittedError,
} from '../domain/quality/errors.js';
import {
  completionWitnessOf,
  readCompletionDocument,
  readPreparedDocument,
  type EvidenceRead,
} from '../domain/quality/evidence.js';
import { replayReceipt, type ReplayReceipt } from '../domain/quality/receipt.js';
import { replayWindowOf } from '../domain/quality/replay-window.js';
import type { ExchangeTargetPort } from '../ports/exchange-target.js';
import type { FaultInjector } from '../ports/faults.js';
import type { Ports } from '../ports/index.js';
import type { TargetPort } from '../ports/target.js';
import { namesOf } from '../publication/exchange-deps.js';
import { runIdOf } from './admission.js';
import { checkCapsule } from './capsule-continuity.js';
import { readCapsule } from './capsule-store.js';
import { QUALITY_CUT_POINTS } from '../domain/quality/cut-points.js';
import { fetchEvidence } from './evidence.js';

export interface ReplayInput {
  invocationId: string;
  /** The exact manifest text the operation sealed ("same invocation and configuration"). */
  manifestText: string;
  selector: Selector | string;
}

/** Read-only: no source at all, and of the target only its identity and one system.tables read. */
export interface ReplayDeps {
  ports: Ports;
  target: Pick<TargetPort, 'identity'>;
  exchange: Pick<ExchangeTargetPort, 'observeTables'>;
  route: SelectedRoute;
  /** Runs the evidence reads at `quality.replay.read` (a fault there fails the replay; nothing is written). */
  faults?: FaultInjector;
}

/**
 * `cutpoint quality replay` (docs/rules.md#replay, N5, N21): a completed operation's
 * governance, replayed by the same invocation and configuration. It checks, and writes
 * nothing: the seal recomputed from the manifest, selector, target identity and work root
 * equals the sealed one; the capsule is v2 COMPLETE with its guard released; prepared.json
 * and completion.json verify (SHA-256, shape, recomputed core = the capsule's); version
 * continuity (the completion version is not above the capsule's observed version); the
 * authority table is the one the core was sealed on; the target's current generation is
 * the published one; the replay window is open. Then it issues its own process-local
 * receipt (replayed_from, the original quality and acceptance results, the immutable core,
 * the released guard, the dispatch count read — never written). It never reads the source,
 * never inserts, never dispatches; the capsule version is unchanged.
 */
export async function replayGovernance(input: ReplayInput, deps: ReplayDeps): Promise<ReplayReceipt> {
  const record = await loadInvocation(deps.ports, input.invocationId);
  if (record.route !== deps.route.name || record.targetId !== routeTargetId(deps)) {
    throw new CutpointError(
      'Delivery.AuthorityMismatch',
      'delivery.recovery_authority_mismatch',
      'the route given is not the one the operation sealed; nothing was read further',
    );
  }
  const targetIdentity = await deps.target.identity();
  assertAuthority(
    record.sealed,
    recomputeAuthority({
      invocationId: input.invocationId,
      manifestText: input.manifestText,
      selector: input.selector,
      route: deps.route,
      targetIdentity,
      workRoot: workRootOf(deps),
    }),
  );
  const ref = { targetId: record.targetId, invocationId: record.invocationId };
  const stored = await readCapsule(deps.ports, ref);
  if (!stored || stored.schema !== 2) throw new QualityActionNotPermittedError('replay', []);
  // Continuity before the state: a capsule put back to PREPARED is a rollback, not an unfinished governance.
  const { capsule } = await checkCapsule(deps.ports, { ...ref, route: record.route }, stored);
  if (capsule.state !== 'COMPLETE') throw new QualityActionNotPermittedError('replay', []);
  const evidence = capsule.completion?.evidence;
  if (!evidence) throw new CompletionEvidencePendingError();
  const fetch = (key: string): Promise<EvidenceRead> => {
    const read = () => fetchEvidence(deps.ports.objects, key);
    return deps.faults ? deps.faults.at(QUALITY_CUT_POINTS.replayRead, read) : read();
  };
  const prepared = readPreparedDocument(
    found(await fetch(capsule.prepared.key)),
    capsule.prepared.sha256,
    capsule.coreDigest,
  );
  const completionRead = await fetch(evidence.key);
  const completion = completionWitnessOf(completionRead, evidence.sha256, capsule.coreDigest);
  const results =
    completion.evidence === 'valid'
      ? readCompletionDocument(found(completionRead), evidence.sha256, capsule.coreDigest).results
      : [];
  const binding = compareAuthorityBinding(prepared.authorityBinding, await deps.ports.authority.describeBinding());
  const names = namesOf(record.invocationId, deps);
  const onTarget = (await deps.exchange.observeTables(names)).find((t) => t.name === names.target);
  const current = onTarget?.uuid ?? '00000000-0000-0000-0000-000000000000';
  const replayWindow = replayWindowOf({
    capsule,
    days: prepared.plan.replayWindowDays,
    now: deps.ports.clock.now().toISOString(),
    replacedWithoutBoundary:
      current.toLowerCase() !== capsule.generation.candidateUuid && capsule.replay.closedAt === undefined,
  });
  return replayReceipt({
    invocationId: record.invocationId,
    currentRunId: runIdOf(`replay-${randomBytes(8).toString('hex')}`),
    dispatchCount: record.facts.dispatch?.count ?? 0,
    capsule,
    probes: prepared.plan.probes,
    results,
    dataset: record.targetId,
    completion,
    replayWindow,
    authorityBinding: binding,
    currentGenerationUuid: current,
  });
}

/** The bytes of a found object; absent or unreadable evidence is never a pass (N2). */
function found(read: EvidenceRead): string {
  if (read.status === 'found') return read.bytes;
  throw new EvidenceInvalidError(
    read.status === 'absent' ? 'missing' : 'unreadable',
    `evidence is ${read.status === 'absent' ? 'missing' : 'unreadable'}`,
  );
}
