import { chunkSeqOf, type PartDescriptor } from '../../domain/delivery/parts.js';
import { forEachConcurrently } from '../../engine/concurrently.js';
import { rerunTransient } from '../../engine/rerun.js';
import type { SourcePort } from '../../ports/source.js';
import { runDeliverySteps } from '../deliver-in-process.js';
import { transition } from '../journal/transition.js';
import type { InvocationRecord } from '../journal/records.js';
import { extractLoadPart } from '../parts/extract-load-part.js';
import { listHeads } from '../parts/part-store.js';
import { observePartial } from '../parts/verify-parts.js';
import { remainingRangesSource, type RemainingRange } from '../source-guard.js';
import { forRerun, transitionIdOf, type StepInput } from '../steps/common.js';
import { readPlan } from '../steps/plan-parts.js';
import { knownOf, RecoveryRetainedError, type RecoveryContext } from './recovery-session.js';

/** How a continue is run (RecoveryDeps): the route's source, and how many unfinished parts one resume takes on. */
export interface ContinueOptions {
  /** The route's source, opened by the caller; only the unfinished parts' remaining ranges are read through it. */
  source: SourcePort;
  /**
   * At most this many unfinished parts per resume (the AWS delivery-resume Lambda's
   * budget); more left → back to a continuable PARTIAL_PROVED, retained with
   * `delivery.continue_more_parts`, and the next resume takes the next ones. Absent: all.
   */
  partsPerResume?: number;
}

/**
 * `resume` from a continuable PARTIAL_PROVED (action-guide.ts RecoveryFacts.continuable):
 * the one recovery that opens the source, under the recovery session runRecovery already
 * took (custody epoch + 1, the seal rechecked). In order:
 * 1. the unfinished parts — the journaled plan's parts whose head is not at EOF — and, per
 *    part, where its read must start (after its last journaled chunk); the source is
 *    wrapped so that only those ranges can be read (`remainingRangesSource`);
 * 2. PARTIAL_PROVED → WRITING_UNKNOWN ("continue: the writer restarts on the unfinished
 *    parts"), which drops the continuation proof (it was this PARTIAL_PROVED's);
 * 3. the route's steps from there (runDeliverySteps, as resume runs them): the part step
 *    is the Map's `extractLoadPart` — a part at EOF claims, finds EOF and reads nothing;
 *    an unfinished one goes on after its last journaled chunk — then VerifyEof proves the
 *    whole window, publication, evidence, checkpoint, cleanup. With `partsPerResume`
 *    below the unfinished count, only that many parts run, and reconcile's own bounded
 *    observation journals PARTIAL_PROVED again (with its new proof) for the next resume.
 * A part that fails again leaves WRITING_UNKNOWN, where reconcile is the permitted action.
 */
export async function continueWriting(
  ctx: RecoveryContext,
  options: ContinueOptions,
): Promise<InvocationRecord | undefined> {
  const { record, deps, ref, fence } = ctx;
  const plan = await readPlan(deps, record);
  const heads = new Map((await listHeads(deps.ports, record.invocationId)).map((h) => [h.part, h]));
  const unfinished = plan.filter((d) => !heads.get(d.part)?.eof);
  const ranges: RemainingRange[] = unfinished.map((d) => {
    const last = heads.get(d.part)?.last;
    return { start: d.start, end: d.end, nextSeq: last ? last.seq + 1 : chunkSeqOf(d.part, 0) };
  });
  const source = remainingRangesSource(options.source, ranges);
  const continued = await transition(deps.ports, ref, {
    from: 'PARTIAL_PROVED',
    to: 'WRITING_UNKNOWN',
    fence,
    transitionId: transitionIdOf('continue', record.invocationId, record.journalSeq),
    known: knownOf(ctx),
  });
  const d = { ...deps, source };
  const input: StepInput = {
    invocationId: record.invocationId,
    fence,
    known: { invocation: continued.invocation, custody: ctx.custody },
  };
  const bound = options.partsPerResume;
  if (bound !== undefined && unfinished.length > bound) {
    return continueSome(ctx, d, input, unfinished.slice(0, bound), unfinished.length);
  }
  const run = await runDeliverySteps(input, d);
  if (run.state !== 'CUSTODY_RELEASED') {
    throw new RecoveryRetainedError(
      'delivery.resume_incomplete',
      `continue stopped at ${run.stoppedAt ?? 'a step'}${run.reasons ? ` (${run.reasons.join(', ')})` : ''}`,
      run.state,
    );
  }
  return undefined;
}

/** A bounded continue: `parts` run (as the Map's items), then back to PARTIAL_PROVED with the proof reconcile would journal. */
async function continueSome(
  ctx: RecoveryContext,
  deps: RecoveryContext['deps'],
  input: StepInput,
  parts: readonly PartDescriptor[],
  unfinished: number,
): Promise<never> {
  await forEachConcurrently(parts, deps.route.route.maxConcurrency, async (part) => {
    await rerunTransient((attempt) => extractLoadPart({ ...(attempt === 1 ? input : forRerun(input)), part }, deps));
  });
  const record = (input.known?.invocation ?? ctx.record) as InvocationRecord;
  const observed = await observePartial(deps, record);
  if (!observed.explained || !observed.continuable) {
    // Every part ran to EOF or the stage stopped explaining itself: reconcile decides, as after any writer.
    throw new RecoveryRetainedError(
      'delivery.resume_incomplete',
      `continued ${parts.length} of ${unfinished} unfinished parts; reconcile proves what the stage holds`,
      'WRITING_UNKNOWN',
    );
  }
  await transition(deps.ports, ctx.ref, {
    from: 'WRITING_UNKNOWN',
    to: 'PARTIAL_PROVED',
    fence: ctx.fence,
    transitionId: transitionIdOf('verify-partial', record.invocationId, record.journalSeq),
    patch: { continuable: observed.continuable },
    known: { invocation: record, custody: ctx.custody },
  });
  throw new RecoveryRetainedError(
    'delivery.continue_more_parts',
    `continued ${parts.length} of ${unfinished} unfinished parts; ${observed.continuable.unfinishedParts} remain: resume again`,
    'PARTIAL_PROVED',
  );
}
