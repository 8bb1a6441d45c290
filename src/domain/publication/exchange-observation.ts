import { ValidationError } from '../errors.js';
import type { ExchangeNames } from './candidate.js';

/**
 * What one read of `system.tables` proves about an EXCHANGE whose outcome is unknown
 * (docs/rules.md#exchange-observation). Pure. The read is
 *   SELECT database, name, toString(uuid) AS uuid, comment FROM system.tables
 *   WHERE (database, name) IN ((db, target), (db, candidate), (db, tombstone))
 * and it is interpreted BY UUID, never by name or row count: EXCHANGE swaps the UUIDs (and
 * the comments, which move with the tables) under the two names, and is not idempotent —
 * a second EXCHANGE swaps them back — so only "which UUID is under which name" proves
 * anything. C = the candidate's UUID (derived from the operation id), P = the predecessor's
 * UUID read just before the dispatch intent and recorded in it.
 */

/** A row of system.tables as observed (uuid as `toString(uuid)` prints it). */
export interface ObservedTable {
  database: string;
  name: string;
  uuid: string;
  comment: string;
}

/** The names the observation reads (target, candidate, tombstone), all in the target's database. */
export type { ExchangeNames };

export interface ExchangeObservationInput {
  names: ExchangeNames;
  /** C: the UUID the candidate was created with. */
  candidateUuid: string;
  /** P: the UUID under the target name at the dispatch intent. */
  predecessorUuid: string;
  /** The owner marker text the candidate was created with (its COMMENT). */
  marker: string;
  /** The read's result; `succeeded: false` when it failed or timed out (rows are then ignored). */
  succeeded: boolean;
  rows: readonly ObservedTable[];
}

/** Why an observation contradicts every history this operation can have produced. */
export type ContradictionReason =
  | 'unexpected_row'
  | 'target_missing'
  | 'third_uuid'
  | 'uuid_in_two_places'
  | 'marker_mismatch'
  | 'candidate_missing'
  | 'predecessor_missing';

export type ExchangeObservation =
  /** The target name holds C with our marker and P is under the candidate or tombstone name. */
  | { outcome: 'COMMIT_PROVEN'; candidateUuid: string; predecessorUuid: string; predecessorName: string }
  /** Target P, candidate name C: not applied YET — a delayed EXCHANGE may still land (not proof of never). */
  | { outcome: 'NOT_APPLIED_YET' }
  /** Target P, tombstone C: a late EXCHANGE can no longer find the candidate name. */
  | { outcome: 'NOT_PUBLISHED_FENCED' }
  | { outcome: 'CONTRADICTED'; why: ContradictionReason }
  /** The read failed or was not visible: nothing is proven either way; state stays. */
  | { outcome: 'UNOBSERVABLE' };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const NIL_UUID = '00000000-0000-0000-0000-000000000000';

export function interpretExchangeObservation(input: ExchangeObservationInput): ExchangeObservation {
  const c = uuidOf(input.candidateUuid, 'candidate');
  const p = uuidOf(input.predecessorUuid, 'predecessor');
  if (c === p)
    throw new ValidationError(
      'publication.observation_input_invalid',
      'the candidate and predecessor UUIDs are the same',
    );
  if (!input.succeeded) return { outcome: 'UNOBSERVABLE' };

  const { names } = input;
  const byName = new Map<string, ObservedTable>();
  for (const row of input.rows) {
    const known =
      row.database === names.database && [names.target, names.candidate, names.tombstone].includes(row.name);
    if (!known || byName.has(row.name)) return contradicted('unexpected_row');
    byName.set(row.name, row);
  }

  // Where each UUID is. Anything but C or P (a nil UUID too: a non-Atomic table) is a third.
  const where = new Map<string, string[]>();
  for (const row of byName.values()) {
    const uuid = row.uuid.toLowerCase();
    if (uuid !== c && uuid !== p) return contradicted('third_uuid');
    where.set(uuid, [...(where.get(uuid) ?? []), row.name]);
  }
  if ((where.get(c)?.length ?? 0) > 1 || (where.get(p)?.length ?? 0) > 1) return contradicted('uuid_in_two_places');

  const target = byName.get(names.target);
  if (!target) return contradicted('target_missing');
  // C carries our marker wherever it is: the comment moves with the table.
  const candidateRow = [...byName.values()].find((row) => row.uuid.toLowerCase() === c);
  if (candidateRow && candidateRow.comment !== input.marker) return contradicted('marker_mismatch');
  const cAt = where.get(c)?.[0];
  const pAt = where.get(p)?.[0];

  if (target.uuid.toLowerCase() === c) {
    if (pAt === undefined) return contradicted('predecessor_missing');
    return { outcome: 'COMMIT_PROVEN', candidateUuid: c, predecessorUuid: p, predecessorName: pAt };
  }
  // The target holds P.
  if (cAt === names.candidate) return { outcome: 'NOT_APPLIED_YET' };
  if (cAt === names.tombstone) return { outcome: 'NOT_PUBLISHED_FENCED' };
  return contradicted('candidate_missing');
}

function contradicted(why: ContradictionReason): ExchangeObservation {
  return { outcome: 'CONTRADICTED', why };
}

function uuidOf(value: string, role: string): string {
  const uuid = value.toLowerCase();
  if (!UUID.test(uuid) || uuid === NIL_UUID) {
    throw new ValidationError('publication.observation_input_invalid', `the ${role} UUID is not a non-nil UUID`);
  }
  return uuid;
}
