import { chunkSeqOf } from '../../domain/delivery/parts.js';
import type { SourcePort } from '../../ports/source.js';
import { runDeliverySteps } from '../deliver-in-process.js';
import { transition } from '../journal/transition.js';
import type { InvocationRecord } from '../journal/records.js';
import { listHeads } from '../parts/part-store.js';
import { remainingRangesSource, type RemainingRange } from '../source-guard.js';
import { output, transitionIdOf, type StepInput } from '../steps/common.js';
import { mapPlanOf, readPlan, type PlanOutput } from '../steps/plan-parts.js';
import type { DeliveryDeps } from '../deps.js';
import { knownOf, RecoveryRetainedError, type RecoveryContext } from './recovery-session.js';

/**
 * Where resume's continue runs the unfinished parts (RecoveryDeps.extract):
 * - `source`: in this process (the CLI, the local runtime), each part through the route's
 *   source, guarded to the parts' remaining ranges, then the remaining steps;
 * - `map`: on the delivery-resume flow's Distributed Map (ContinueParts), the same part
 *   Task deliver-window's Map runs, every part at once up to `max_concurrency`; this step
 *   only hands the parts over and never opens the source.
 */
export type ContinueOptions = { source: SourcePort } | { map: true };

/**
 * `resume` from a continuable PARTIAL_PROVED (action-guide.ts RecoveryFacts.continuable):
 * the one recovery that writes extraction, under the recovery session runRecovery already
 * took (custody epoch + 1, the seal rechecked). It journals PARTIAL_PROVED →
 * WRITING_UNKNOWN ("continue: the writer restarts on the unfinished parts", dropping the
 * continuation proof, which was this PARTIAL_PROVED's); then the part step runs over the
 * plan as deliver-window's Map runs it — a part at EOF claims, finds EOF and reads
 * nothing; an unfinished one goes on after its last journaled chunk — and VerifyEof proves
 * the whole window before publication, evidence, checkpoint and cleanup.
 *
 * In this process (`continueWriting`) all of that runs here, the source wrapped so that
 * only the unfinished parts' remaining ranges can be read (`remainingRangesSource`). On
 * the flow (`handPartsToMap`) the step returns the plan for the flow's Map, whose part
 * Tasks read only their own remaining range; the flow then runs VerifyEof and resumes
 * from VERIFIED_EOF. A part that fails again leaves WRITING_UNKNOWN, where reconcile is
 * the permitted action.
 */
export async function continueWriting(ctx: RecoveryContext, source: SourcePort): Promise<InvocationRecord | undefined> {
  const { deps } = ctx;
  const plan = await readPlan(deps, ctx.record);
  const heads = new Map((await listHeads(deps.ports, ctx.record.invocationId)).map((h) => [h.part, h]));
  const ranges: RemainingRange[] = plan
    .filter((d) => !heads.get(d.part)?.eof)
    .map((d) => {
      const last = heads.get(d.part)?.last;
      return { start: d.start, end: d.end, nextSeq: last ? last.seq + 1 : chunkSeqOf(d.part, 0) };
    });
  const input = await restartWriter(ctx);
  return stepsToRelease('continue', input, { ...deps, source: remainingRangesSource(source, ranges) });
}

/**
 * The flow's continue: the writer restarted (PARTIAL_PROVED → WRITING_UNKNOWN) and the
 * carried state with the plan, which the delivery-resume flow's ContinueParts Map reads
 * as deliver-window's Map reads PlanParts' output.
 */
export async function handPartsToMap(ctx: RecoveryContext): Promise<PlanOutput> {
  const input = await restartWriter(ctx);
  const record = input.known?.invocation as InvocationRecord;
  return { ...output(input, record, true, ctx.custody), plan: mapPlanOf(record, ctx.deps) };
}

/** PARTIAL_PROVED → WRITING_UNKNOWN under the recovery session; the input of the part step and the steps after it. */
async function restartWriter(ctx: RecoveryContext): Promise<StepInput> {
  const { record, deps, ref, fence } = ctx;
  const continued = await transition(deps.ports, ref, {
    from: 'PARTIAL_PROVED',
    to: 'WRITING_UNKNOWN',
    fence,
    transitionId: transitionIdOf('continue', record.invocationId, record.journalSeq),
    known: knownOf(ctx),
  });
  return {
    invocationId: record.invocationId,
    fence,
    known: { invocation: continued.invocation, custody: ctx.custody },
  };
}

/**
 * The route's remaining steps from `input` (runDeliverySteps) to CUSTODY_RELEASED; ending
 * anywhere else is retained (`delivery.resume_incomplete`, naming the step that stopped).
 * What resume and its continue run once custody is theirs.
 */
export async function stepsToRelease(what: string, input: StepInput, deps: DeliveryDeps): Promise<undefined> {
  const run = await runDeliverySteps(input, deps);
  if (run.state !== 'CUSTODY_RELEASED') {
    throw new RecoveryRetainedError(
      'delivery.resume_incomplete',
      `${what} stopped at ${run.stoppedAt ?? 'a step'}${run.reasons ? ` (${run.reasons.join(', ')})` : ''}`,
      run.state,
    );
  }
  // Custody released: the last step hands on no record, so the projection reads it.
  return undefined;
}
