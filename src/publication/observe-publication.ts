import type { Fence } from '../domain/fence.js';
import type { DeliveryDeps } from '../delivery/deps.js';
import type { JournaledResult } from '../delivery/journal/journaled-write.js';
import type { CustodyRecord, InvocationRecord } from '../delivery/journal/records.js';
import { transition } from '../delivery/journal/transition.js';
import { ownerBindingOf, transitionIdOf } from '../delivery/steps/common.js';
import { candidateMarkerOf } from '../domain/publication/candidate.js';
import { PUBLICATION_CUT_POINTS } from '../domain/publication/cut-points.js';
import {
  interpretExchangeObservation,
  type ExchangeObservation,
  type ObservedTable,
} from '../domain/publication/exchange-observation.js';
import { exchangeOf, namesOf } from './exchange-deps.js';

/** What one observation of a dispatched EXCHANGE proved: the interpreter's outcome (reasons by name only). */
export type PublicationObserved = ExchangeObservation['outcome'];

/**
 * One read of system.tables for a dispatched operation (PUBLICATION_UNKNOWN with its
 * dispatch fact), interpreted by UUID (src/domain/publication/exchange-observation.ts), and
 * journaled when it proves something: COMMIT_PROVEN → PUBLISHED with the publication fact
 * (mode exchange, the candidate's UUID as the published object, the verified rows and
 * digest); CONTRADICTED → INCIDENT_RETAINED. NOT_APPLIED_YET, NOT_PUBLISHED_FENCED and a
 * failed read (UNOBSERVABLE) journal nothing here: the first is not proof of never (a
 * delayed EXCHANGE may still land) and only reconcile, after fencing, may conclude.
 * Never sends an EXCHANGE, never writes the dispatch count.
 */
export async function recordObservation(
  deps: DeliveryDeps,
  record: InvocationRecord,
  fence: Fence,
  custody: CustodyRecord & { fence: Fence },
): Promise<{ observed: PublicationObserved; observation: ExchangeObservation; result?: JournaledResult }> {
  const dispatch = record.facts.dispatch;
  const candidate = record.facts.candidate;
  const parts = record.facts.parts;
  if (record.state !== 'PUBLICATION_UNKNOWN' || !dispatch || !candidate || !parts) {
    throw new Error(`bug: recordObservation needs a dispatched PUBLICATION_UNKNOWN invocation (${record.state})`);
  }
  const names = namesOf(record.invocationId, deps);
  let rows: ObservedTable[] = [];
  let succeeded = true;
  try {
    rows = await exchangeOf(deps).observeTables(names);
  } catch {
    succeeded = false;
  }
  const observation = interpretExchangeObservation({
    names,
    candidateUuid: dispatch.candidateUuid,
    predecessorUuid: dispatch.predecessorUuid,
    marker: candidateMarkerOf(record.invocationId, ownerBindingOf(record.sealed)),
    succeeded,
    rows,
  });
  const ref = { targetId: record.targetId, invocationId: record.invocationId };
  const known = { invocation: record, custody };
  if (observation.outcome === 'COMMIT_PROVEN') {
    const result = await transition(deps.ports, ref, {
      from: 'PUBLICATION_UNKNOWN',
      to: 'PUBLISHED',
      fence,
      transitionId: transitionIdOf('publish-observed', record.invocationId),
      patch: {
        // No receipt row says when an EXCHANGE ran; the dispatch intent's journal time (it
        // came right before) is the instant recorded, the same on every re-run.
        publication: {
          rows: candidate.rows,
          digest: parts.digest,
          stagingObjectId: candidate.uuid,
          mode: 'exchange',
          publishedAt: record.updatedAt,
        },
      },
      known,
      cutPoint: PUBLICATION_CUT_POINTS.commitRecord,
    });
    return { observed: observation.outcome, observation, result };
  }
  if (observation.outcome === 'CONTRADICTED') {
    const result = await transition(deps.ports, ref, {
      from: 'PUBLICATION_UNKNOWN',
      to: 'INCIDENT_RETAINED',
      fence,
      transitionId: transitionIdOf('publish-contradicted', record.invocationId),
      known,
    });
    return { observed: observation.outcome, observation, result };
  }
  return { observed: observation.outcome, observation };
}
