import type { RecoveryProjection } from '../domain/delivery/identifiers.js';
import type { CapsuleV2 } from '../domain/quality/capsule.js';
import type { InspectProjection } from '../domain/quality/projection.js';
import type { ReplayReceipt } from '../domain/quality/receipt.js';

/** What each operator step of `cutpoint demo quality` printed (src/demo/quality-demo.ts). */
export interface QualityDemoStages {
  inspect: { command: string; projection: RecoveryProjection; quality: InspectProjection };
  reconcile: { command: string; projection: RecoveryProjection };
  observePending: { command: string; capsuleState?: string; remoteTermination?: string; quality: InspectProjection };
  observeComplete: { command: string; capsuleState?: string; remoteTermination?: string; quality: InspectProjection };
  resume: { command: string; projection: RecoveryProjection; quality: InspectProjection };
  replay: { command: string; receipt: ReplayReceipt };
}

export interface QualityDemoFacts {
  run: { status: string; error?: string };
  stages: QualityDemoStages;
  /** The capsule as read after each of these steps. */
  capsules: { pending?: CapsuleV2; complete?: CapsuleV2; retired?: CapsuleV2; afterReplay?: CapsuleV2 };
  /** The journal's dispatch count read after the replay. */
  dispatchCountAfterReplay: number;
  sourceWindowRows: number;
  target: { rows: number; distinctKeys: number; inWindow: number; matching: number; predecessorRows: number };
  sourceCallsDuringRecovery: number;
  window: { start: string; end: string };
}

/**
 * The demo's outcome and whether it holds: the run stopped for recovery with the
 * publication unknown; reconcile proved it (PUBLISHED); the first observation ended
 * TARGET_PENDING at its deadline with the guard released and remote termination
 * UNVERIFIED; the second COMPLETE; resume released custody and retired the capsule; the
 * replay receipt is COMPLETE with one dispatch and changed nothing (capsule version,
 * dispatch count); the target holds every window row exactly once and nothing else (the
 * previous generation is gone); recovery never called the source.
 */
export function qualityDemoOutcome(facts: QualityDemoFacts): { ok: boolean; outcome: ReturnType<typeof outcomeOf> } {
  const outcome = outcomeOf(facts);
  const { stages, capsules } = facts;
  const pending = stages.observePending.quality;
  const ok =
    facts.run.status === 'FAILED' &&
    facts.run.error === 'Delivery.NeedsRecovery' &&
    stages.inspect.projection.state === 'PUBLICATION_UNKNOWN' &&
    stages.inspect.quality.capsule_state === 'PREPARED' &&
    stages.reconcile.projection.state === 'PUBLISHED' &&
    capsules.pending?.state === 'TARGET_PENDING' &&
    capsules.pending.reader === undefined &&
    !pending.reader_guard.held &&
    pending.replay_details.last_observation?.error_class === 'DEADLINE' &&
    stages.observePending.remoteTermination === 'UNVERIFIED' &&
    capsules.complete?.state === 'COMPLETE' &&
    capsules.complete.retiredAt === undefined &&
    stages.observeComplete.quality.replay_details.governance === 'complete' &&
    outcome.state === 'CUSTODY_RELEASED' &&
    !outcome.custodyHeld &&
    capsules.retired?.state === 'COMPLETE' &&
    outcome.capsuleRetired &&
    outcome.receipt.governance === 'complete' &&
    outcome.receipt.dispatchCount === 1 &&
    outcome.dispatchCount === 1 &&
    outcome.replayChangedNothing &&
    outcome.windowRowsInSource > 0 &&
    outcome.rowsInTarget === outcome.windowRowsInSource &&
    outcome.distinctKeys === outcome.windowRowsInSource &&
    outcome.duplicates === 0 &&
    outcome.missing === 0 &&
    outcome.rowsOutsideWindow === 0 &&
    outcome.previousGenerationRows === 0 &&
    outcome.sourceCallsDuringRecovery === 0;
  return { ok, outcome };
}

function outcomeOf(facts: QualityDemoFacts) {
  const { stages, capsules, target } = facts;
  const versionBefore = capsules.retired?.version ?? null;
  const versionAfter = capsules.afterReplay?.version ?? null;
  const dispatchBefore = stages.resume.quality.dispatch_count;
  return {
    state: stages.resume.projection.state,
    window: facts.window,
    governanceSequence: [
      stages.inspect.quality.capsule_state,
      capsules.pending?.state ?? null,
      capsules.complete?.state ?? null,
      capsules.retired?.state ?? null,
    ],
    pendingObservation: stages.observePending.quality.replay_details.last_observation,
    capsuleRetired: capsules.retired?.retiredAt !== undefined,
    dispatchCount: facts.dispatchCountAfterReplay,
    receipt: {
      kind: stages.replay.receipt.kind,
      governance: stages.replay.receipt.quality.governance,
      dispatchCount: stages.replay.receipt.dispatch_count,
    },
    replay: {
      capsuleVersionBefore: versionBefore,
      capsuleVersionAfter: versionAfter,
      dispatchCountBefore: dispatchBefore,
      dispatchCountAfter: facts.dispatchCountAfterReplay,
    },
    replayChangedNothing:
      versionBefore !== null && versionBefore === versionAfter && dispatchBefore === facts.dispatchCountAfterReplay,
    rowsInTarget: target.rows,
    distinctKeys: target.distinctKeys,
    windowRowsInSource: facts.sourceWindowRows,
    duplicates: target.rows - target.distinctKeys,
    missing: facts.sourceWindowRows - target.matching,
    rowsOutsideWindow: target.rows - target.inWindow,
    previousGenerationRows: target.predecessorRows,
    sourceCallsDuringRecovery: facts.sourceCallsDuringRecovery,
    custodyHeld: stages.resume.projection.holds_custody,
  };
}
