import { canonicalDigest } from '../../domain/digest.js';
import { targetIdOf, validateInvocationId, workRootIn } from '../../domain/delivery/identifiers.js';
import type { JournalState } from '../../domain/delivery/journal-states.js';
import type { SealedAuthority } from '../../domain/delivery/sealed-authority.js';
import type { SealedWindow } from '../../domain/delivery/window.js';
import { ValidationError } from '../../domain/errors.js';
import type { Fence } from '../../domain/fence.js';
import type { StagingRef } from '../../domain/delivery/target-types.js';
import type { DeliveryDeps } from '../deps.js';
import { TransitionPreconditionError } from '../journal/errors.js';
import { validateCustodyFence, type InvocationRef } from '../journal/keys.js';
import { loadInvocation, readInvocation, type CustodyRecord, type InvocationRecord } from '../journal/records.js';
import { assertCustody } from '../custody.js';
import { parseCarried, type Carried } from './carried.js';
import { JournalUnavailableError } from '../../domain/delivery/journal-states.js';

/**
 * Shared by the deliver-window steps. Every step is `(input, deps) => StepOutput`:
 * - input is `{ invocationId, fence }` (what begin returned), validated here;
 * - the step reloads the invocation record and acts only from its journaled state, so a
 *   re-run whose work is already journaled returns `acted: false` without touching
 *   anything;
 * - every journal write carries the fence and a transition id derived from (step,
 *   invocation), so a retry after a lost response finds its own claim.
 */

export interface StepInput {
  invocationId: string;
  fence: Fence;
  /** The journal state the previous step left (carried.ts); absent or null: the step reads it. */
  known?: Carried | null;
}

export interface StepOutput extends StepInput {
  /** What the next step carries; null when this step holds no custody record to carry (the next step reads). */
  known: Carried | null;
  targetId: string;
  /** The journal state after the step. */
  state: JournalState;
  /** False when the step found its work already journaled (or not its turn) and did nothing. */
  acted: boolean;
}

/**
 * `{ invocationId, fence }`, plus the carried `known` state unless `retry` (the flow's
 * `$$.State.RetryCount`) says this is not the step's first attempt: a retried step reads
 * the journal, since its first attempt may have written. `known` is checked in full by
 * `loadForStep`, against the route's target.
 */
export function parseStepInput(input: unknown): StepInput {
  const v = input as (Partial<StepInput> & { retry?: unknown }) | null;
  if (!v || typeof v !== 'object')
    throw new ValidationError('delivery.step_input_invalid', 'step input must be { invocationId, fence }');
  const invocationId = validateInvocationId(v.invocationId);
  const fence = validateCustodyFence(v.fence);
  if (fence.owner !== invocationId)
    throw new ValidationError('delivery.step_input_invalid', 'the fence belongs to another invocation');
  if (v.retry !== undefined && !(Number.isSafeInteger(v.retry) && (v.retry as number) >= 0))
    throw new ValidationError('delivery.step_input_invalid', 'retry must be a count');
  const carried = v.known !== undefined && v.known !== null && (v.retry ?? 0) === 0;
  return { invocationId, fence, ...(carried ? { known: v.known as Carried } : {}) };
}

/** A step's input for a rerun: what it carried is dropped, so the rerun reads the journal. */
export function forRerun<I extends StepInput>(input: I): I {
  const { known: _stale, ...rest } = input;
  return rest as I;
}

/** The target id the route delivers to. */
export function routeTargetId(deps: Pick<DeliveryDeps, 'route'>): string {
  const { target } = deps.route.route;
  return targetIdOf(target.binding, target.table);
}

export interface StepContext {
  record: InvocationRecord;
  ref: InvocationRef;
  /**
   * Custody for a step about to act outside the authority: the carried custody record,
   * or one read now (`assertCustody`). Either way Delivery.Fenced unless the step's fence
   * holds it; the authority writes carry the fence in their own transactions regardless.
   */
  custody(): Promise<CustodyRecord & { fence: Fence }>;
}

/**
 * The invocation a step acts on. Carried (`input.known`, carried.ts): checked as a read
 * would be and used as is: no read at all. Otherwise reloaded under the deps' route
 * target (ONE read: the record, parsed and checked state ↔ facts); either way checked to
 * belong to the route. The cross-item invariants
 * (custody ↔ record, head ↔ journal records) are inspect's and recovery's
 * (`loadInvocation`): a step needs none of them, since every write it makes is
 * conditioned on the record's version and the custody fence in the same transaction. An
 * invocation not found under this target is looked up by its id, for the precise error.
 */
export async function loadForStep(input: StepInput, deps: DeliveryDeps): Promise<StepContext> {
  const here = { targetId: routeTargetId(deps), invocationId: input.invocationId };
  const carried = input.known ? parseCarried(input.known, here, input.fence) : undefined;
  const record =
    carried?.invocation ??
    (await readInvocation(deps.ports, here).catch(async (error: unknown) => {
      if (!(error instanceof JournalUnavailableError)) throw error;
      return loadInvocation(deps.ports, input.invocationId);
    }));
  if (record.route !== deps.route.name || record.targetId !== here.targetId) {
    throw new ValidationError(
      'delivery.route_mismatch',
      `invocation ${input.invocationId} was sealed for another route or target`,
    );
  }
  const ref = { targetId: record.targetId, invocationId: record.invocationId };
  return { record, ref, custody: async () => carried?.custody ?? assertCustody(deps.ports, ref.targetId, input.fence) };
}

/** Where the step's invocation keeps its chunks and evidence (identifiers.ts `workRootIn`). */
export function workRootOf(deps: Pick<DeliveryDeps, 'ports' | 'route'>): string {
  return workRootIn(deps.ports.objects.location, deps.route.name);
}

/** `<step>.<invocation>` (plus a part, e.g. a batch): stable across retries and sessions. */
export function transitionIdOf(step: string, invocationId: string, part?: string | number): string {
  return part === undefined ? `${step}.${invocationId}` : `${step}.${part}.${invocationId}`;
}

/**
 * A step's output: the state after it, and what the next step carries (`known`): the
 * record as the step left it with the custody it holds (given, or the carried one). No
 * custody known, nothing carried: the next step reads.
 */
export function output(
  input: StepInput,
  record: InvocationRecord,
  acted: boolean,
  custody?: CustodyRecord & { fence: Fence },
): StepOutput {
  const held = custody ?? input.known?.custody;
  return {
    invocationId: input.invocationId,
    fence: input.fence,
    targetId: record.targetId,
    state: record.state,
    acted,
    known: held ? { invocation: record, custody: held } : null,
  };
}

/**
 * The owner binding stored on the owned stage: a digest of the sealed authority (route,
 * bindings, target identity, work root), so recovery recomputes it from the journal alone.
 */
export function ownerBindingOf(sealed: SealedAuthority): string {
  return canonicalDigest({
    kind: 'cutpoint.delivery.staging-owner',
    invocationId: sealed.invocationId,
    manifestDigest: sealed.manifestDigest,
    selectorDigest: sealed.selectorDigest,
    bindingDigest: sealed.bindingDigest,
    identityDigest: sealed.identityDigest,
    workRootDigest: sealed.workRootDigest,
  });
}

/** The journaled owned stage; a step that needs it before it is recorded is a precondition failure. */
export function stagingRefOf(record: InvocationRecord): StagingRef {
  const staging = record.facts.staging;
  if (!staging || !record.facts.ownedStagesRecorded) {
    throw new TransitionPreconditionError(`invocation ${record.invocationId} has no recorded owned stage`);
  }
  return { table: staging.table, objectId: staging.objectId, invocationId: record.invocationId, owner: staging.owner };
}

export function windowDates(window: SealedWindow): { start: Date; end: Date } {
  return { start: new Date(window.start), end: new Date(window.end) };
}
