import type { DeliveryDeps } from '../delivery/deps.js';
import { loadForStep, output, parseStepInput, type StepOutput } from '../delivery/steps/common.js';
import type { CapsuleState, CapsuleV2, ObservationOutcome, RemoteTermination } from '../domain/quality/capsule.js';
import { WorkerCrashedError } from '../domain/errors.js';
import { CustodyFencedError } from '../delivery/journal/errors.js';
import { continuityError } from '../domain/quality/continuity.js';
import { GenerationChangedError, IncompleteError } from '../domain/quality/errors.js';
import { routeGovernanceOf, runIdOf } from './admission.js';
import { readCapsule } from './capsule-store.js';
import { checkCapsule } from './capsule-continuity.js';
import { checkBeforeObserving, readPrepared } from './observe-checks.js';
import { recordCompletionEvidence } from './observe-completion.js';
import {
  acquireGuard,
  CapsuleMovedError,
  noteIncomplete,
  persistAndRelease,
  releaseGuard,
  type HeldGuard,
  type Persisted,
} from './observe-guard.js';
import {
  deadlineOf,
  pendingCodeOf,
  readerInputOf,
  readTarget,
  type TargetReader,
  type TargetReading,
} from './observe-reader.js';
import { assertObservedSeal, type GivenManifest } from './observe-seal.js';

export interface ObserveOutput extends StepOutput {
  /** The capsule's state after the step (absent: no v2 capsule). */
  capsuleState?: CapsuleState;
  /** What this observation persisted (absent when the step observed nothing). */
  outcome?: ObservationOutcome;
  remoteTermination?: RemoteTermination;
  /** Names of the original probes that did not pass (FAILED); names only, never values. */
  failures?: string[];
}

/**
 * ObserveTarget (docs/rules.md#bounded-reader steps 1–9): the original probes evaluated on the
 * published generation C, by a bounded reader under the non-expiring reader guard.
 *
 * Acts only in PUBLISHED with an exchange publication and a v2 capsule in PREPARED or
 * TARGET_PENDING: the seal recomputed from the manifest given, before anything is written
 * (observe-seal.ts) → acquire the guard (`quality.reader.acquire`) → every check (journal
 * commit fact, C under the target name with our marker, prepared.json valid for the sealed
 * core, completion.json ABSENT) → one bounded read of the probes with the generation read
 * before and after → ONE persist-and-release transaction (COMPLETE / FAILED /
 * TARGET_PENDING). A failed check or a generation that moved releases the guard by our
 * token with no state change and throws its diagnostic. An unverified reap or a persist
 * whose outcome stays unknown keeps the guard: Quality.Incomplete. COMPLETE then writes
 * completion.json and records its evidence fact; a COMPLETE capsule without that fact is
 * repaired by running the step again. No source read, no INSERT or EXCHANGE (I8).
 */
export async function observeTargetOnce(
  input: unknown,
  deps: DeliveryDeps,
  tr: TargetReader,
  again = false,
): Promise<ObserveOutput> {
  const step = parseStepInput(input);
  const { record, ref, custody: heldCustody } = await loadForStep(step, deps);
  const notActed = (capsule?: CapsuleV2): ObserveOutput => ({
    ...output(step, record, false),
    ...(capsule ? { capsuleState: capsule.state } : {}),
  });
  if (record.state !== 'PUBLISHED' || record.facts.publication?.mode !== 'exchange') return notActed();
  const capsule = await readCapsule(deps.ports, ref);
  if (!capsule || capsule.schema !== 2) return notActed();
  const custody = await heldCustody();
  const capsuleRef = { ...ref, route: record.route };

  const writes =
    capsule.state === 'PREPARED' ||
    capsule.state === 'TARGET_PENDING' ||
    (capsule.state === 'COMPLETE' && !capsule.completion?.evidence);
  if (!writes) return notActed(capsule);
  // The seal recomputed from the manifest given (docs/rules.md#bounded-reader) before anything is
  // written: a refusal takes no guard.
  await assertObservedSeal(input as GivenManifest, record, deps);
  // Continuity before the guard is taken (capsule-continuity.ts): a capsule put back to
  // before its completion is refused here, never written — an acquire and release would
  // move its version on. What cannot be proved either way is refused as well; only the
  // crash between COMPLETE and its evidence fact (pending) is repaired below.
  const { continuity } = await checkCapsule(deps.ports, capsuleRef, capsule);
  if (continuity.continuity === 'unknown' && continuity.code !== 'quality.completion_evidence_pending')
    throw continuityError(continuity);

  if (capsule.state === 'COMPLETE') {
    // The crash between COMPLETE and its evidence fact: the deterministic document, then the fact.
    const prepared = await readPrepared(deps, record, capsule);
    const repaired = await recordCompletionEvidence(deps.ports, capsuleRef, prepared, { fence: step.fence });
    return { ...output(step, record, repaired.written, custody), capsuleState: 'COMPLETE', outcome: 'COMPLETE' };
  }

  const now = deps.ports.clock.now();
  // The route's deadline is the sealed one: both callers proved the manifest's digest against
  // the seal first (the flow above, the operator's observe before custody), and the deadline
  // is part of the admission PREPARE sealed (docs/rules.md#bounded-reader).
  const deadlineAt = deadlineOf(now, routeGovernanceOf(deps.route).observeDeadlineS, tr);
  const runId = runIdOf(step.fence.session);
  let held: HeldGuard;
  try {
    held = await acquireGuard(deps.ports, ref, capsule, {
      fence: step.fence,
      runId,
      deadlineAt,
      known: { invocation: record, custody },
    });
  } catch (error) {
    // Nothing of ours was written: decide once more on what is current (a COMPLETE capsule: nothing to do).
    if (error instanceof CapsuleMovedError && !again)
      return observeTargetOnce({ ...(input as object), known: null }, deps, tr, true);
    throw error;
  }

  const { target } = deps.route.route;
  const relation = { database: target.table.schema, table: target.table.name };
  const { prepared, readerInput } = await releasingOnRefusal(deps, held, 'a failed check', async () => {
    const document = await checkBeforeObserving(deps, held.known.invocation, held.capsule);
    return {
      prepared: document,
      readerInput: readerInputOf(tr, {
        probes: document.plan.probes,
        relation,
        deadlineAt,
        now: deps.ports.clock.now(),
        // The sealed retry, like the probes: what PREPARE admitted, not the route given now.
        retry: document.plan.retry,
      }),
    };
  });
  let reading: TargetReading;
  try {
    reading = await readTarget(tr, {
      input: readerInput,
      probes: prepared.plan.probes,
      candidateUuid: held.capsule.generation.candidateUuid,
      token: held.guard.token,
      deadlineAt,
    });
  } catch (error) {
    if (error instanceof WorkerCrashedError) throw error;
    // The reader failed in a way that proves nothing about its process: the guard stays.
    await noteIncomplete(deps.ports, held);
    throw new IncompleteError(
      'the bounded reader failed without a verified end of its process; the reader guard is kept',
    );
  }
  if (reading.kind === 'INCOMPLETE') {
    await noteIncomplete(deps.ports, held);
    throw new IncompleteError(
      'the reader process was not seen to end within the reap bound; the reader guard is kept (quiescence procedure)',
    );
  }
  if (reading.kind === 'GENERATION_CHANGED') {
    await releaseGuard(deps.ports, held, 'a generation change');
    throw new GenerationChangedError('the generation under the target name changed during the observation');
  }

  const at = deps.ports.clock.now().toISOString();
  // What was observed, kept on the capsule (docs/rules.md#quality-capsule): the run, the stable code,
  // the version held, the generation read.
  const seen = { runId, at, capsuleVersion: held.capsule.version };
  const persisted: Persisted =
    reading.kind === 'PENDING'
      ? {
          lastObservation: {
            ...seen,
            outcome: 'TARGET_PENDING',
            code: pendingCodeOf(reading.errorClass),
            errorClass: reading.errorClass,
            remoteTermination: reading.remoteTermination,
          },
        }
      : reading.evaluation.outcome === 'COMPLETE'
        ? {
            lastObservation: {
              ...seen,
              outcome: 'COMPLETE',
              code: 'quality.complete',
              generation: reading.generation,
              remoteTermination: 'not_applicable',
            },
            completion: { version: held.capsule.version + 1, at, runId },
          }
        : {
            lastObservation: {
              ...seen,
              outcome: 'FAILED',
              code: 'quality.failed',
              generation: reading.generation,
              remoteTermination: 'not_applicable',
            },
            failure: { probes: reading.evaluation.failed, at, runId },
          };
  try {
    await persistAndRelease(deps.ports, held, persisted);
  } catch (error) {
    if (error instanceof IncompleteError) await noteIncomplete(deps.ports, held);
    // A newer session took custody while we held the guard: neither the outcome nor the release
    // can be written by us any more — INCOMPLETE (N12), so the incident step hears of the guard
    // (found by the scheduler: publication seed 75, a reconcile takeover during the observation).
    if (error instanceof CustodyFencedError)
      throw new IncompleteError(
        'a newer session took custody before the outcome was persisted; the outcome is not persisted and the reader guard is kept (quiescence procedure)',
      );
    throw error;
  }
  const outcome = persisted.lastObservation.outcome;
  if (outcome === 'COMPLETE') await recordCompletionEvidence(deps.ports, capsuleRef, prepared, { fence: step.fence });
  const after = await readCapsule(deps.ports, ref);
  return {
    ...output(step, record, true, custody),
    known: null, // the journal moved on several writes: the next step reads
    capsuleState: after?.schema === 2 ? after.state : outcome,
    outcome,
    remoteTermination: persisted.lastObservation.remoteTermination,
    ...(persisted.failure ? { failures: persisted.failure.probes } : {}),
  };
}

/** Runs a check under the guard; its refusal releases the guard by our token (no state change) and is rethrown. */
async function releasingOnRefusal<T>(
  deps: DeliveryDeps,
  held: HeldGuard,
  why: string,
  body: () => Promise<T>,
): Promise<T> {
  try {
    return await body();
  } catch (error) {
    // An injected crash is this process dying: nothing more happens in it.
    if (!(error instanceof WorkerCrashedError)) await releaseGuard(deps.ports, held, why);
    throw error;
  }
}
