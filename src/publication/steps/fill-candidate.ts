import { rereadOnStale } from '../../delivery/steps/carried.js';
import {
  loadForStep,
  output,
  ownerBindingOf,
  parseStepInput,
  transitionIdOf,
  type StepOutput,
} from '../../delivery/steps/common.js';
import type { DeliveryDeps } from '../../delivery/deps.js';
import { TransitionPreconditionError } from '../../delivery/journal/errors.js';
import { recordFacts } from '../../delivery/journal/transition.js';
import { candidateMarkerOf, candidateUuidOf } from '../../domain/publication/candidate.js';
import { exchangeOf, namesOf } from '../exchange-deps.js';

/**
 * ClickHouse publication, after VerifyEof: create the owned candidate (the target's exact
 * schema, the derived UUID C, the owner marker as its comment) and fill it from the
 * verified stage — one INSERT … SELECT, deduplicated by a token of the load digest — then
 * journal the candidate's identity, row count and digest (still VERIFIED_EOF). Acts only in
 * VERIFIED_EOF without a recorded candidate. A crash between CREATE or fill and the
 * journal write is repaired by the re-run: both are idempotent by exact identity (same
 * UUID, same marker; equal count and digest).
 */
async function fillCandidateOnce(input: unknown, deps: DeliveryDeps): Promise<StepOutput> {
  const step = parseStepInput(input);
  const { record, ref, custody: heldCustody } = await loadForStep(step, deps);
  if (record.state !== 'VERIFIED_EOF' || record.facts.candidate) return output(step, record, false);
  const parts = record.facts.parts;
  if (!parts) throw new TransitionPreconditionError(`invocation ${record.invocationId} has no verified parts`);
  const exchange = exchangeOf(deps);
  const custody = await heldCustody();
  const names = namesOf(record.invocationId, deps);
  const uuid = candidateUuidOf(record.invocationId);
  const marker = candidateMarkerOf(record.invocationId, ownerBindingOf(record.sealed));
  await exchange.createCandidate({ names, uuid, marker });
  const fill = await exchange.fillCandidate({
    names,
    uuid,
    marker,
    expectedRows: parts.rows,
    token: `${record.invocationId}:fill:${parts.digest}`,
  });
  const result = await recordFacts(deps.ports, ref, {
    state: 'VERIFIED_EOF',
    fence: step.fence,
    transitionId: transitionIdOf('fill-candidate', record.invocationId),
    patch: {
      candidate: {
        table: { schema: names.database, table: names.candidate },
        uuid,
        rows: fill.rows,
        digest: fill.digest,
      },
    },
    known: { invocation: record, custody },
  });
  return output(step, result.invocation, !result.alreadyApplied, custody);
}

/** The step, deciding again from the journal when it refused or did nothing on a carried state (steps/carried.ts). */
export const fillCandidate = rereadOnStale(fillCandidateOnce);
