import type { PublicationRetirement } from '../delivery/publication-mode.js';
import type { RecoveryContext } from '../delivery/recovery/recovery-session.js';
import { candidateUuidOf } from '../domain/publication/candidate.js';
import { exchangeOf, namesOf } from './exchange-deps.js';

/**
 * The exchange mode's `retirePublication`: retirement of a ClickHouse operation that was
 * never published (EMPTY_STAGING, PARTIAL_PROVED, REEXTRACT_REQUIRED) — a ClickHouse
 * operation has no receipt row: its candidate's UUID says whether it was published.
 * Besides the stage, the candidate — under its own name, or under the tombstone name
 * after reconcile fenced it — is ours to drop, by its exact UUID C. Never when C is under the target name: that is the published generation,
 * and a journal that says "not published" while it is there is contradicting evidence.
 * - PUBLISHED: C is the target's generation (the caller retains an incident, drops nothing);
 * - NOT_OURS: a name of ours holds another UUID (left untouched; incident);
 * - UNPROVABLE: C's absence cannot be proved by this principal (custody kept);
 * - ABSENT_PROVED: no table of UUID C exists and the database's metadata is visible.
 */
export async function retireCandidate(ctx: RecoveryContext): Promise<PublicationRetirement> {
  const { record, deps } = ctx;
  const exchange = exchangeOf(deps);
  const names = namesOf(record.invocationId, deps);
  const uuid = candidateUuidOf(record.invocationId);
  const tables = await exchange.observeTables(names);
  if (tables.some((t) => t.name === names.target && t.uuid === uuid)) return 'PUBLISHED';
  for (const name of [names.candidate, names.tombstone]) {
    const held = tables.find((t) => t.name === name);
    if (!held) continue;
    if (held.uuid !== uuid) return 'NOT_OURS';
    if ((await exchange.dropByUuid({ database: names.database, name, uuid })) === 'NOT_OURS') return 'NOT_OURS';
  }
  const absence = await exchange.uuidAbsence(names.database, uuid);
  return absence.absent && absence.metadataVisible ? 'ABSENT_PROVED' : 'UNPROVABLE';
}
