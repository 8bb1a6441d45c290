import { randomBytes } from 'node:crypto';
import { acquireCustody } from '../delivery/custody.js';
import type { DeliveryDeps } from '../delivery/deps.js';
import { loadInvocation } from '../delivery/journal/records.js';
import { forbiddenSource } from '../delivery/source-guard.js';
import { routeTargetId, workRootOf } from '../delivery/steps/common.js';
import type { Selector, SelectedRoute } from '../domain/delivery/manifest-types.js';
import { assertAuthority, recomputeAuthority } from '../domain/delivery/sealed-authority.js';
import { canonicalJson } from '../domain/digest.js';
import { CutpointError } from '../domain/errors.js';
import type { ObservationOutcome, RemoteTermination } from '../domain/quality/capsule.js';
import {
  AuthorityReplacedError,
  AuthorityRollbackError,
  QualityActionNotPermittedError,
  QualityFailedError,
  ReaderGuardHeldError,
  TargetPendingError,
} from '../domain/quality/errors.js';
import type { InspectProjection } from '../domain/quality/projection.js';
import type { ExchangeTargetPort } from '../ports/exchange-target.js';
import type { Ports } from '../ports/index.js';
import { exchangeMode } from '../publication/exchange-mode.js';
import type { TargetPort } from '../ports/target.js';
import { capsuleAsRead } from './capsule-continuity.js';
import { inspectQuality } from './inspect.js';
import type { TargetReader } from './observe-reader.js';
import type { ObserveOutput } from './observe-target.js';
import { observeTarget } from './steps/observe-target.js';

/**
 * `cutpoint quality observe <id> --manifest F#R --yes` (docs/rules.md#quality-commands): the operator's
 * observation of a PUBLISHED operation whose capsule is PREPARED or TARGET_PENDING — the
 * same use case as the flow's ObserveTarget step (src/quality/observe-target.ts), in a new
 * session that takes custody (epoch + 1, so the flow's older session is fenced out).
 * In this order, each refusal writing nothing:
 * 1. the guide (docs/rules.md#quality-state-to-action) as inspect computes it (evidence
 *    classified): `observe` must be listed (`quality.action_not_permitted` otherwise — a
 *    COMPLETE, FAILED or unpublished operation is refused here; a held guard as
 *    Quality.ReaderGuardHeld, see below);
 * 2. the whole seal recomputed from the manifest, selector, the target's identity observed
 *    now and the work root (`delivery.recovery_authority_mismatch` / the seal's codes);
 * 3. custody for a new session, then the record reloaded and the guide checked again;
 * 4. the observation (guard, checks, bounded reader, persist-and-release).
 * COMPLETE returns the projection with the observation; TARGET_PENDING and FAILED are the
 * designed non-final results and leave as Quality.TargetPending / Quality.Failed (exit 1,
 * the outcome persisted); an unproved reader exit leaves as Quality.Incomplete (guard kept).
 */

export interface OperatorObserveInput {
  invocationId: string;
  manifestText: string;
  /** `file#route` with the file as the caller resolved it (absolute). */
  selector: Selector | string;
  /** The session's name; a fresh `observe-<hex>` by default. */
  session?: string;
}

export interface OperatorObserveDeps {
  ports: Ports;
  target: TargetPort;
  exchange: ExchangeTargetPort;
  route: SelectedRoute;
  reader: TargetReader;
}

export type ObservedProjection = InspectProjection & {
  observation: { outcome: ObservationOutcome; remote_termination: RemoteTermination };
};

/** `quality.action_not_permitted`, naming what the guide says instead (its diagnostic_code and actions). */
export class ObserveNotPermittedError extends QualityActionNotPermittedError {
  constructor(permitted: readonly string[], diagnosticCode: string) {
    super('observe', permitted);
    this.message = `${this.message}; diagnostic_code ${diagnosticCode} (cutpoint quality inspect shows why); nothing was written`;
  }
}

/**
 * The guide's refusal of `observe` for this operation, before anything is written. A guard
 * already held is refused as Quality.ReaderGuardHeld (docs/rules.md#bounded-reader step 9), not as a plain
 * guide refusal: the holder may be this very execution's earlier attempt, killed after its
 * acquire (an ASL Retry re-invokes the handler with a new session), and then nothing else
 * will ever report the guard — the flow routes this name to NotifyIncident (found by the
 * scheduler: publication seed 2223).
 */
export async function assertObservePermitted(ports: Ports, invocationId: string): Promise<void> {
  const projection = await inspectQuality(ports, invocationId);
  if (projection.permitted_actions.includes('observe')) return;
  // A rolled-back capsule or a replaced authority table is named as what it is, not as a plain guide refusal.
  if (projection.diagnostic_code === 'quality.authority_version_rollback')
    throw new AuthorityRollbackError(
      'observe is not permitted: the capsule was put back below its completion (observed rollback); nothing was written',
    );
  if (projection.diagnostic_code === 'quality.authority_replaced')
    throw new AuthorityReplacedError(
      'observe is not permitted: the authority table is not the one the capsule was sealed on; nothing was written',
    );
  if (projection.reader_guard.held) {
    throw new ReaderGuardHeldError(
      `observe is not permitted: the quality reader guard is held (diagnostic_code ${projection.diagnostic_code}, holder ${projection.reader_guard.holder_run_id}); it has no expiry and no force-clear (quiescence procedure); nothing was written`,
    );
  }
  throw new ObserveNotPermittedError(projection.permitted_actions, projection.diagnostic_code);
}

/** One operator observation (steps 1–4 above) and its result, designed outcomes not yet turned into exits. */
export async function operatorObservation(
  input: OperatorObserveInput,
  deps: OperatorObserveDeps,
): Promise<ObserveOutput> {
  const { ports } = deps;
  await assertObservePermitted(ports, input.invocationId);
  const before = await loadInvocation(ports, input.invocationId);
  if (before.route !== deps.route.name || before.targetId !== routeTargetId(deps)) {
    throw new CutpointError(
      'Delivery.AuthorityMismatch',
      'delivery.recovery_authority_mismatch',
      'the route given is not the one the operation sealed; nothing was mutated',
    );
  }
  const recomputed = recomputeAuthority({
    invocationId: input.invocationId,
    manifestText: input.manifestText,
    selector: input.selector,
    route: deps.route,
    targetIdentity: await deps.target.identity(),
    workRoot: workRootOf(deps),
  });
  assertAuthority(before.sealed, recomputed);
  const ref = { targetId: before.targetId, invocationId: before.invocationId };
  // Custody only while the capsule still has no reader guard (checked in the same transaction):
  // taking over from a run that acquired the guard since step 1 would fence it out of ever
  // persisting its observation or releasing its guard (found by the scheduler: the publication schedule with seed 47).
  const grant = await acquireCustody(
    ports,
    ref,
    input.session ?? `observe-${randomBytes(8).toString('hex')}`,
    async () => {
      const { legs } = await capsuleAsRead(ports, { ...ref, route: before.route });
      await assertObservePermitted(ports, input.invocationId);
      return legs;
    },
  );
  // A concurrent session may have moved the operation between the first check and custody.
  await assertObservePermitted(ports, input.invocationId);
  const stepDeps: DeliveryDeps = {
    ports,
    target: deps.target,
    mode: exchangeMode({ exchange: deps.exchange, observeReader: () => Promise.resolve(deps.reader) }),
    route: deps.route,
    source: forbiddenSource(),
  };
  return observeTarget({ invocationId: input.invocationId, fence: grant.fence }, stepDeps, deps.reader);
}

/** `cutpoint quality observe`: COMPLETE → the projection; TARGET_PENDING / FAILED → their named errors (exit 1). */
export async function operatorObserve(
  input: OperatorObserveInput,
  deps: OperatorObserveDeps,
): Promise<ObservedProjection> {
  const out = await operatorObservation(input, deps);
  if (out.capsuleState === 'TARGET_PENDING') {
    throw new TargetPendingError(
      `the observation ended TARGET_PENDING (${out.remoteTermination === 'UNVERIFIED' ? 'remote termination unverified' : 'persisted'}); the publication stays proven, governance is unfinished; observe again later (permitted_actions: [observe])`,
    );
  }
  if (out.capsuleState === 'FAILED') {
    throw new QualityFailedError(
      `required probe(s) failed on the published generation: ${(out.failures ?? []).join(', ')}; terminal — preserve the evidence and escalate`,
    );
  }
  const projection = await inspectQuality(deps.ports, input.invocationId);
  const observation = {
    outcome: out.outcome ?? 'COMPLETE',
    remote_termination: out.remoteTermination ?? 'not_applicable',
  };
  return JSON.parse(canonicalJson({ ...projection, observation })) as ObservedProjection;
}
