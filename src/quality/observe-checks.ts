import type { DeliveryDeps } from '../delivery/deps.js';
import type { InvocationRecord } from '../delivery/journal/records.js';
import { ownerBindingOf } from '../delivery/steps/common.js';
import { qualityEvidenceKeyOf } from '../domain/delivery/identifiers.js';
import { candidateMarkerOf } from '../domain/publication/candidate.js';
import type { CapsuleV2 } from '../domain/quality/capsule.js';
import {
  AuthorityRollbackError,
  CommitUnprovenError,
  EvidenceInvalidError,
  GenerationChangedError,
} from '../domain/quality/errors.js';
import { readPreparedDocument, type PreparedDocument } from '../domain/quality/evidence.js';
import { exchangeOf, namesOf } from '../publication/exchange-deps.js';
import { fetchEvidence } from './evidence.js';

/**
 * docs/rules.md#bounded-reader step 2 (N4: only after the exact commit and generation checks), every check
 * before a single probe runs. Each failure is its stable diagnostic error; the caller
 * releases the guard by its token with no state change before rethrowing it.
 */
export async function checkBeforeObserving(
  deps: DeliveryDeps,
  record: InvocationRecord,
  capsule: CapsuleV2,
): Promise<PreparedDocument> {
  const candidateUuid = capsule.generation.candidateUuid;
  // The journal's publication fact is the only proof of the commit (never target rows).
  const publication = record.facts.publication;
  if (record.state !== 'PUBLISHED' || !publication || publication.mode !== 'exchange') throw new CommitUnprovenError();
  if (publication.stagingObjectId !== candidateUuid)
    throw new GenerationChangedError('the journal proves the publication of another generation than the capsule seals');

  // The generation under the target name, now: exactly C, with our owner marker.
  const names = namesOf(record.invocationId, deps);
  const tables = await exchangeOf(deps).observeTables(names);
  const onTarget = tables.find((t) => t.database === names.database && t.name === names.target);
  const marker = candidateMarkerOf(record.invocationId, ownerBindingOf(record.sealed));
  if (!onTarget || onTarget.uuid !== candidateUuid || onTarget.comment !== marker) throw new GenerationChangedError();

  const prepared = await readPrepared(deps, record, capsule);

  // completion.json must be ABSENT: present while the capsule is not COMPLETE, the item was rolled back
  // (docs/rules.md#version-continuity).
  let completion;
  try {
    completion = await deps.ports.objects.get(qualityEvidenceKeyOf(record.route, record.invocationId, 'completion'));
  } catch {
    throw new EvidenceInvalidError('unreadable', 'completion.json: the read failed, so its absence is not proved');
  }
  if (completion)
    throw new AuthorityRollbackError(
      'completion.json exists while the capsule is not COMPLETE: the authority row was rolled back; no second evaluation',
    );
  return prepared;
}

/** prepared.json: valid evidence of this operation and generation whose recomputed core is the sealed one. */
export async function readPrepared(
  deps: DeliveryDeps,
  record: InvocationRecord,
  capsule: CapsuleV2,
): Promise<PreparedDocument> {
  const read = await fetchEvidence(deps.ports.objects, capsule.prepared.key);
  if (read.status !== 'found')
    throw new EvidenceInvalidError(
      read.status === 'absent' ? 'missing' : 'unreadable',
      `prepared.json: ${read.status}`,
    );
  const prepared = readPreparedDocument(read.bytes, capsule.prepared.sha256, capsule.coreDigest);
  if (prepared.invocationId !== record.invocationId || prepared.candidateUuid !== capsule.generation.candidateUuid) {
    throw new EvidenceInvalidError('malformed', 'prepared.json names another operation or generation');
  }
  return prepared;
}
