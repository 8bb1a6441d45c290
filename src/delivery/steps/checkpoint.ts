import { advanceCheckpoint, type GovernanceLegs } from '../checkpoint.js';
import type { DeliveryDeps } from '../deps.js';
import { transition } from '../journal/transition.js';
import { loadForStep, output, parseStepInput, transitionIdOf, type StepOutput } from './common.js';
import { rereadOnStale } from './carried.js';

export interface CheckpointOutput extends StepOutput {
  /** True when this invocation moved the route checkpoint (false: it already stood at or past the window end). */
  moved?: boolean;
}

/**
 * Step 9: advance the route checkpoint by CAS to the sealed window end and move
 * PUBLISHED → SUCCEEDED ("evidence and checkpoint") in one transaction
 * (`advanceCheckpoint`: fenced, journaled once per invocation, never backwards). Acts
 * only in PUBLISHED; evidence must be recorded first (advanceCheckpoint refuses
 * otherwise).
 */
async function checkpointOnce(input: unknown, deps: DeliveryDeps): Promise<CheckpointOutput> {
  const step = parseStepInput(input);
  const { record, ref, custody: heldCustody } = await loadForStep(step, deps);
  if (record.state !== 'PUBLISHED') {
    return {
      ...output(step, record, false),
      ...(record.facts.checkpoint ? { moved: record.facts.checkpoint.moved } : {}),
    };
  }
  // The mode's governance gate (an exchange route: refused unless the capsule is COMPLETE
  // with its completion evidence, and the transaction holds the capsule at the version
  // read: docs/publication.md, 'ClickHouse publication and quality governance'). Checked once per call (the evidence read, DescribeTable): the
  // legs hold the version read, so a capsule that moves after the check fails the
  // transaction and the step decides again.
  const gate = await deps.mode.governance(deps, ref);
  const governance: GovernanceLegs | undefined = gate ? () => Promise.resolve(gate.legs) : undefined;
  const custody = await heldCustody();
  const advanced = await advanceCheckpoint(deps.ports, ref, step.fence, { invocation: record, custody }, governance);
  if (advanced.invocation.state !== 'PUBLISHED')
    return { ...output(step, advanced.invocation, !advanced.alreadyApplied, custody), moved: advanced.moved };
  // A journal from before the checkpoint and SUCCEEDED were one transaction: the checkpoint
  // was recorded in PUBLISHED, and the transition is journaled on its own.
  const result = await transition(deps.ports, ref, {
    from: 'PUBLISHED',
    to: 'SUCCEEDED',
    fence: step.fence,
    transitionId: transitionIdOf('succeed', record.invocationId),
    known: { invocation: advanced.invocation, custody },
    ...(governance ? { legs: await governance() } : {}),
  });
  return { ...output(step, result.invocation, !result.alreadyApplied, custody), moved: advanced.moved };
}

/** The step, deciding again from the journal when it refused or did nothing on a carried state (steps/carried.ts). */
export const checkpoint = rereadOnStale(checkpointOnce);
