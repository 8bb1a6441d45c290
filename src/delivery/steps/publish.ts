import { IdentityConflictError, OutcomeUnknownError } from '../../domain/errors.js';
import type { PublicationReceipt, PublishRequest } from '../../domain/delivery/target-types.js';
import { receiptMatches } from '../../domain/delivery/target-rules.js';
import { sqlTargetMode } from '../../domain/delivery/manifest.js';
import { TransitionPreconditionError } from '../journal/errors.js';
import type { DeliveryDeps } from '../deps.js';
import type { Fence } from '../../domain/fence.js';
import { type PublicationFact } from '../journal/facts.js';
import { type JournaledResult } from '../journal/journaled-write.js';
import { type InvocationRecord } from '../journal/records.js';
import { transition } from '../journal/transition.js';
import {
  loadForStep,
  output,
  parseStepInput,
  stagingRefOf,
  transitionIdOf,
  windowDates,
  type StepOutput,
} from './common.js';
import { rereadOnStale } from './carried.js';

/** The publication request the journal proves: the sealed window, the stage, the parts' verified receipts. */
export function publishRequestOf(record: InvocationRecord, deps: DeliveryDeps): PublishRequest {
  const { target } = deps.route.route;
  const parts = record.facts.parts;
  if (!parts)
    throw new TransitionPreconditionError(`invocation ${record.invocationId} has no verified parts to publish`);
  return {
    invocationId: record.invocationId,
    target: { schema: target.table.schema, table: target.table.name },
    window: windowDates(record.sealed.window),
    mode: sqlTargetMode(target),
    keyColumns: target.keyColumns,
    timeColumn: target.timeColumn,
    staging: stagingRefOf(record),
    rows: parts.rows,
    digest: parts.digest,
  };
}

export function publicationFactOf(receipt: PublicationReceipt): PublicationFact {
  return {
    rows: receipt.rows,
    digest: receipt.digest,
    stagingObjectId: receipt.stagingObjectId,
    mode: receipt.mode,
    publishedAt: receipt.publishedAt.toISOString(),
  };
}

/**
 * Receipt first (VERIFIED_EOF): before a step draws any conclusion from the stage — and
 * could journal REEXTRACT_REQUIRED — the exact publication receipt decides. A COMMIT that
 * landed without being journaled (a crash after it, a stalled zombie's late COMMIT) is
 * taken from its receipt: matching → PUBLISHED (the same record the publish step writes);
 * a receipt for this invocation that does not match → INCIDENT_RETAINED. Undefined when
 * the principal proves there is no receipt (the caller goes on with the stage). The SQL
 * transaction mode's `adoptPublication` (transaction-mode.ts): a ClickHouse exchange route
 * writes no receipt row — its dispatch intent, journaled before the one EXCHANGE, records
 * a publication attempt, and VERIFIED_EOF has none.
 */
export async function adoptReceipt(
  record: InvocationRecord,
  fence: Fence,
  deps: DeliveryDeps,
): Promise<JournaledResult | undefined> {
  if (record.state !== 'VERIFIED_EOF') return undefined;
  const receipt = await deps.target.probeReceipt(record.invocationId);
  if (!receipt) return undefined;
  const ref = { targetId: record.targetId, invocationId: record.invocationId };
  if (!receiptMatches(receipt, publishRequestOf(record, deps))) {
    return transition(deps.ports, ref, {
      from: 'VERIFIED_EOF',
      to: 'INCIDENT_RETAINED',
      fence,
      transitionId: transitionIdOf('publish-foreign-receipt', record.invocationId),
    });
  }
  return transition(deps.ports, ref, {
    from: 'VERIFIED_EOF',
    to: 'PUBLISHED',
    fence,
    transitionId: transitionIdOf('publish', record.invocationId),
    patch: { publication: publicationFactOf(receipt) },
  });
}

/**
 * Step 7: publish in ONE target transaction that also writes the durable receipt row
 * (invocation, window, rows, digest, stage object id) — `target.publish`, whose COMMIT is
 * `delivery.publish.commit`.
 * - VERIFIED_EOF: publish; the receipt (new, or found because an earlier attempt
 *   committed before a crash) → PUBLISHED with the receipt as the publication fact; a
 *   receipt for this invocation that does not match → INCIDENT_RETAINED, nothing applied.
 *   A lost COMMIT acknowledgement (Cutpoint.OutcomeUnknown) → PUBLICATION_UNKNOWN,
 *   journaled, and the step returns that state: nothing is replayed blindly.
 * - PUBLICATION_UNKNOWN: only observes — the exact receipt present (and matching) →
 *   PUBLISHED ("receipt reconciliation"); a receipt for this invocation that does not
 *   match what the journal proved → INCIDENT_RETAINED (contradicting evidence); absent →
 *   stays, for the reconcile command, which may prove non-publication.
 * Any other state: nothing to do.
 */
async function publishOnce(input: unknown, deps: DeliveryDeps): Promise<StepOutput> {
  const step = parseStepInput(input);
  const { record, ref, custody: heldCustody } = await loadForStep(step, deps);
  if (record.state !== 'VERIFIED_EOF' && record.state !== 'PUBLICATION_UNKNOWN') return output(step, record, false);
  const request = publishRequestOf(record, deps);
  const custody = await heldCustody();
  // A receipt for this invocation that does not match what the journal proved is
  // contradicting evidence, whichever state found it: journaled, custody kept.
  const retainIncident = async (): Promise<StepOutput> => {
    const incident = await transition(deps.ports, ref, {
      from: record.state,
      to: 'INCIDENT_RETAINED',
      fence: step.fence,
      transitionId: transitionIdOf('publish-foreign-receipt', record.invocationId),
      known: { invocation: record, custody },
    });
    return output(step, incident.invocation, !incident.alreadyApplied, custody);
  };
  if (record.state === 'PUBLICATION_UNKNOWN') {
    const receipt = await deps.target.probeReceipt(record.invocationId);
    if (!receipt) return output(step, record, false, custody);
    if (!receiptMatches(receipt, request)) return retainIncident();
    const result = await transition(deps.ports, ref, {
      from: 'PUBLICATION_UNKNOWN',
      to: 'PUBLISHED',
      fence: step.fence,
      transitionId: transitionIdOf('publish-reconciled', record.invocationId),
      patch: { publication: publicationFactOf(receipt) },
      known: { invocation: record, custody },
    });
    return output(step, result.invocation, !result.alreadyApplied, custody);
  }
  let receipt: PublicationReceipt;
  try {
    receipt = (await deps.target.publish(request)).receipt;
  } catch (error) {
    // target.publish checks the receipt first, in the publication transaction: one that
    // exists but differs is refused there, nothing applied.
    if (error instanceof IdentityConflictError && error.code === 'delivery.receipt_identity_conflict')
      return retainIncident();
    if (!(error instanceof OutcomeUnknownError)) throw error;
    const result = await transition(deps.ports, ref, {
      from: 'VERIFIED_EOF',
      to: 'PUBLICATION_UNKNOWN',
      fence: step.fence,
      // VERIFIED_EOF ⇄ PUBLICATION_UNKNOWN may cycle (reconcile proves nothing published,
      // resume loses the next answer too): the journal position keeps each crossing its own
      // transition, while a retry of this same attempt still finds its claim.
      transitionId: transitionIdOf('publish-unknown', record.invocationId, record.journalSeq),
      known: { invocation: record, custody },
    });
    return output(step, result.invocation, true, custody);
  }
  const result = await transition(deps.ports, ref, {
    from: 'VERIFIED_EOF',
    to: 'PUBLISHED',
    fence: step.fence,
    transitionId: transitionIdOf('publish', record.invocationId),
    patch: { publication: publicationFactOf(receipt) },
    known: { invocation: record, custody },
  });
  return output(step, result.invocation, !result.alreadyApplied, custody);
}

/** The step, deciding again from the journal when it refused or did nothing on a carried state (steps/carried.ts). */
export const publish = rereadOnStale(publishOnce);
