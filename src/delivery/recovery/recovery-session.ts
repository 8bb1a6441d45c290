import { randomBytes } from 'node:crypto';
import { recoveryProjectionOf, type RecoveryProjection } from '../../domain/delivery/identifiers.js';
import { type JournalState } from '../../domain/delivery/journal-states.js';
import { assertActionPermitted, repeatsCompleted, type LiveAction } from '../../domain/delivery/action-guide.js';
import type { Selector, SelectedRoute } from '../../domain/delivery/manifest-types.js';
import { assertAuthority, recomputeAuthority, type TargetIdentity } from '../../domain/delivery/sealed-authority.js';
import { CutpointError } from '../../domain/errors.js';
import type { TransactionLeg } from '../../ports/authority.js';
import type { Fence } from '../../domain/fence.js';
import type { Ports } from '../../ports/index.js';
import { forbiddenSource, type GuardedSource } from '../source-guard.js';
import type { ContinueOptions } from './continue.js';
import type { PlanOutput } from '../steps/plan-parts.js';
import type { TargetPort } from '../../ports/target.js';
import { acquireCustody, assertCustody } from '../custody.js';
import type { DeliveryDeps } from '../deps.js';
import { validateSession, type InvocationRef } from '../journal/keys.js';
import { recoverySummaryOf } from '../journal/listing.js';
import { withRunbook } from '../journal/runbook.js';
import {
  loadInvocationAndCustody,
  readInvocation,
  type CustodyRecord,
  type InvocationRecord,
} from '../journal/records.js';
import type { Carried } from '../steps/carried.js';
import { routeTargetId, workRootOf } from '../steps/common.js';

/**
 * One live recovery action (reconcile, resume, retire: docs/rules.md#recovery-actions), in this order:
 * 1. the journal record, checked with its custody and journal records (`loadInvocation`),
 *    and the state-to-action guide (a refused action writes nothing);
 * 2. the sealed authority, recomputed from what the operator supplies (manifest,
 *    selector) and what is observed now (the target's identity, read-only; the work root
 *    under this object store) — a mismatch writes nothing: not even custody is taken;
 * 3. a new recovery session takes custody (`acquireCustody`: epoch + 1, so any zombie
 *    session of an older epoch is fenced out of every later write) — for resume on the
 *    mode's condition, in the same transaction (resume.ts);
 * 4. the record as the takeover journaled it is rechecked (a concurrent session may have
 *    moved it since step 1), then the action runs on it and the custody the takeover wrote;
 * 5. the resulting recovery projection (what `inspect` prints), of the record as the
 *    action's last write left it.
 * The repeat of a completed action (retire on RETIRED, journal-states.ts REPEATABLE_ON)
 * passes steps 1 and 2, takes no custody and runs only the action's `repeat`.
 * Every recovery path is source-free: the deps carry `forbiddenSource()`, which refuses and
 * records any call, so a test can assert none was made. The one exception is resume's
 * continue of a continuable PARTIAL_PROVED (continue.ts), which reads the unfinished
 * parts' remaining ranges through `RecoveryDeps.extract` and nothing else.
 */

export interface RecoveryInput {
  invocationId: string;
  /** The exact manifest text the invocation sealed. */
  manifestText: string;
  /** `file#route` as the caller resolved it (absolute file). */
  selector: Selector | string;
  /**
   * Test seam: what the target reports about itself. Omitted (always, outside tests), it
   * is observed with `target.identity()` before anything is mutated.
   */
  targetIdentity?: TargetIdentity;
  /** The recovery session's name; a fresh one per action by default. */
  session?: string;
}

export interface RecoveryDeps {
  ports: Ports;
  target: TargetPort;
  /** How the window is published (DeliveryDeps.mode): what reconcile, resume and retire call where the modes differ. */
  mode: DeliveryDeps['mode'];
  route: SelectedRoute;
  /** The refusing source; a fresh `forbiddenSource()` by default. */
  source?: GuardedSource;
  /** The run's fault injector (DeliveryDeps.faults): the reader of resume's observation crosses it. */
  faults?: DeliveryDeps['faults'];
  /**
   * Where `resume` of a continuable PARTIAL_PROVED runs the unfinished parts (continue.ts):
   * here through the route's source, read through a guard that passes their remaining
   * ranges alone, or on the resume flow's Map. Every other action, and resume from any
   * other state, never sees it.
   */
  extract?: ContinueOptions;
}

export interface RecoveryResult {
  action: LiveAction;
  invocationId: string;
  /** The state after the action. */
  state: JournalState;
  /** The recovery session's fence; absent when the action repeated a completed one (no custody taken). */
  fence?: Fence;
  projection: RecoveryProjection;
  /** Resume handed the unfinished parts to the flow's Map (continue.ts `handPartsToMap`): the carried state and the plan. */
  continueOnMap?: PlanOutput;
}

/** A live action that ended short of its goal; custody is retained and the state is journaled. */
export class RecoveryRetainedError extends CutpointError {
  constructor(
    code: string,
    message: string,
    readonly state: JournalState,
  ) {
    super('Delivery.RecoveryRetained', code, `${message}; custody is retained (state ${state})`);
  }
}

export function newRecoverySession(action: LiveAction): string {
  return `recover-${action}-${randomBytes(8).toString('hex')}`;
}

export interface RecoveryContext {
  /** The record as the custody takeover left it: the action's first write is conditioned on its version. */
  record: InvocationRecord;
  ref: InvocationRef;
  fence: Fence;
  /** The custody the session holds, as its takeover wrote it: the check before an effect outside the authority, and every write's fence leg. */
  custody: CustodyRecord & { fence: Fence };
  deps: DeliveryDeps & { source: GuardedSource };
}

/** What the action's first journaled write carries (steps/carried.ts): nothing is read before it submits. */
export function knownOf(ctx: Pick<RecoveryContext, 'record' | 'custody'>): Carried {
  return { invocation: ctx.record, custody: ctx.custody };
}

export interface RecoveryOptions {
  /** acquireCustody's condition, planned each round: legs the custody transaction must still satisfy, or its refusal before anything is written. */
  custodyCondition?: (ports: Ports, ref: InvocationRef) => Promise<TransactionLeg[]>;
  /** A refusal on the record as loaded, before the authority is checked or custody taken (nothing written). */
  refuse?: (record: InvocationRecord) => void;
  /** What the repeat of the completed action does (REPEATABLE_ON): without custody, on the record as loaded. */
  repeat?: (deps: RecoveryContext['deps'], record: InvocationRecord) => Promise<void>;
}

/**
 * Runs `act` inside the session protocol above; `act` returns the record as its last
 * journaled write left it (undefined: its last step handed on none, so it is read once).
 * What is read, and why (test/integration/delivery-recovery-requests.test.ts counts it):
 * the checked load of step 1 (the record with its custody and journal invariants); the
 * begin record, since a session is granted custody at most once (custody.ts); nothing
 * else before the action: the takeover is planned on what step 1 read, the action's first
 * write on what the takeover wrote, and the projection is the last write's record. Only a
 * write that CONFLICTs reads again (journaled-write.ts).
 */
export async function runRecovery(
  action: LiveAction,
  input: RecoveryInput,
  recoveryDeps: RecoveryDeps,
  act: (ctx: RecoveryContext) => Promise<InvocationRecord | undefined>,
  options: RecoveryOptions = {},
): Promise<RecoveryResult> {
  const { ports } = recoveryDeps;
  const loaded = await loadInvocationAndCustody(ports, input.invocationId);
  const before = loaded.invocation;
  assertActionPermitted(before.state, before.facts, action);
  options.refuse?.(before);
  const source = recoveryDeps.source ?? forbiddenSource();
  const deps = {
    ports,
    target: recoveryDeps.target,
    route: recoveryDeps.route,
    mode: recoveryDeps.mode,
    source,
    ...(recoveryDeps.faults ? { faults: recoveryDeps.faults } : {}),
  };
  if (before.route !== deps.route.name || before.targetId !== routeTargetId(deps)) {
    throw new CutpointError(
      'Delivery.AuthorityMismatch',
      'delivery.recovery_authority_mismatch',
      'the route given is not the one the invocation sealed; nothing was mutated and custody is held',
    );
  }
  // Every digest is recomputed from what is observed now: the operator's manifest and
  // selector, the target's own identity, the work root under this object store.
  const targetIdentity = input.targetIdentity ?? (await deps.target.identity());
  const checkAuthority = (record: InvocationRecord) => {
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
  };
  checkAuthority(before);
  if (repeatsCompleted(before.state, action)) {
    // Nothing is journaled by the repeat: the record as loaded is the projection.
    await options.repeat?.(deps, before);
    return { action, invocationId: input.invocationId, state: before.state, projection: projectionOf(before) };
  }
  const ref: InvocationRef = { targetId: before.targetId, invocationId: before.invocationId };
  const session = validateSession(input.session ?? newRecoverySession(action));
  const { custodyCondition } = options;
  const grant = await acquireCustody(
    ports,
    ref,
    session,
    custodyCondition ? () => custodyCondition(ports, ref) : undefined,
    loaded,
  );
  // The record as the takeover journaled it (its transaction was conditioned on the version
  // it planned on, so a session that moved the invocation meanwhile made it read again):
  // rechecked, as a concurrent session may have moved it since step 1.
  const record = grant.invocation;
  checkAuthority(record);
  assertActionPermitted(record.state, record.facts, action);
  // A repeated grant (this session's own, from before) wrote nothing now: its custody is read.
  const custody = grant.custody ?? (await assertCustody(ports, ref.targetId, grant.fence));
  const last = (await act({ record, ref, fence: grant.fence, custody, deps })) ?? (await readInvocation(ports, ref));
  return {
    action,
    invocationId: input.invocationId,
    state: last.state,
    fence: grant.fence,
    projection: projectionOf(last),
  };
}

/** The recovery projection of a record (what `inspect` prints: listing.ts `inspectInvocation`, without a gate). */
function projectionOf(record: InvocationRecord): RecoveryProjection {
  return withRunbook(recoveryProjectionOf(recoverySummaryOf(record)));
}
