import { createHash } from 'node:crypto';
import { canonicalJson } from '../digest.js';
import { ValidationError } from '../errors.js';
import { stagingTableNameOf, validateInvocationId } from '../delivery/identifiers.js';

/**
 * The identities of a ClickHouse EXCHANGE publication (docs/rules.md#exchange-publication),
 * derived from the operation id alone, never "the latest" anything: pure, no I/O.
 *
 * - candidate UUID `C` = UUIDv8 of SHA-256("cutpoint.candidate.v1\0" + invocationId): a
 *   crash between CREATE and its journal record still leaves an exactly recognisable table;
 * - names, all in the target's database: stage (load table) = `stagingTableNameOf(id)`,
 *   candidate = stage + `_c`, tombstone (fence) = stage + `_x`;
 * - owner marker (the candidate's COMMENT, set at CREATE, never altered; it moves with the
 *   table through EXCHANGE): canonical JSON of the operation id and the owner binding.
 */

export const CANDIDATE_UUID_DOMAIN = 'cutpoint.candidate.v1\0';
export const CANDIDATE_MARKER_KIND = 'cutpoint.clickhouse-candidate.v1';

const UUID_TEXT = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** ClickHouse database and table names cutpoint will put into DDL text (quoted with backticks anyway). */
const NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;
/** An owner binding digest (`ownerBindingOf(seal)`): 64 lower-case hex. */
const OWNER = /^[0-9a-f]{64}$/;

/** The candidate table's UUID: RFC 9562 version 8 (custom), variant 10xx, lower-case text. */
export function candidateUuidOf(invocationId: string): string {
  const id = validateInvocationId(invocationId);
  const bytes = createHash('sha256')
    .update(CANDIDATE_UUID_DOMAIN + id, 'utf8')
    .digest()
    .subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x80;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** A UUID as `toString(uuid)` prints it (lower-case 8-4-4-4-12); anything else is refused. */
export function assertUuidText(uuid: string, what = 'uuid'): string {
  if (typeof uuid !== 'string' || !UUID_TEXT.test(uuid)) {
    throw new ValidationError('publication.invalid_uuid', `${what} must be a lower-case 8-4-4-4-12 hex UUID`);
  }
  return uuid;
}

/** A ClickHouse database or table name cutpoint addresses: `[A-Za-z_][A-Za-z0-9_]*`, at most 63 characters. */
export function assertChName(name: string, what = 'name'): string {
  if (typeof name !== 'string' || !NAME.test(name)) {
    throw new ValidationError(
      'publication.invalid_identifier',
      `invalid ${what} ${JSON.stringify(String(name).slice(0, 80))}: expected [A-Za-z_][A-Za-z0-9_]* of at most 63 characters`,
    );
  }
  return name;
}

export function assertOwnerBinding(owner: string): string {
  if (typeof owner !== 'string' || !OWNER.test(owner)) {
    throw new ValidationError('publication.invalid_owner', 'the owner binding must be a 64 lower-case hex digest');
  }
  return owner;
}

/** The tables one EXCHANGE publication addresses, all in `database`. */
export interface ExchangeNames {
  database: string;
  /** The published table (the target). */
  target: string;
  /** The load table (`TargetPort.createStaging`'s stage). */
  stage: string;
  /** The candidate: `CREATE … AS target`, filled from the stage, exchanged with the target. */
  candidate: string;
  /** Where reconcile's fence renames the candidate; a late EXCHANGE naming the candidate then fails UNKNOWN_TABLE. */
  tombstone: string;
}

export function exchangeNamesOf(invocationId: string, target: { database: string; table: string }): ExchangeNames {
  const stage = stagingTableNameOf(invocationId);
  const database = assertChName(target.database, 'target database');
  const table = assertChName(target.table, 'target table');
  if (table === stage || table.toLowerCase().startsWith('cutpoint_stg_')) {
    throw new ValidationError(
      'publication.invalid_identifier',
      'the target table may not use the owned cutpoint_stg_ prefix',
    );
  }
  return { database, target: table, stage, candidate: `${stage}_c`, tombstone: `${stage}_x` };
}

/** The candidate's owner marker: canonical JSON of validated ids only (safe to quote into DDL). */
export function candidateMarkerOf(invocationId: string, ownerBinding: string): string {
  return canonicalJson({
    invocationId: validateInvocationId(invocationId),
    kind: CANDIDATE_MARKER_KIND,
    owner: assertOwnerBinding(ownerBinding),
  });
}

/** True only for this operation's marker, byte for byte as `candidateMarkerOf` writes it. */
export function isOurMarker(comment: string | null | undefined, invocationId: string, ownerBinding: string): boolean {
  if (typeof comment !== 'string') return false;
  try {
    return comment === candidateMarkerOf(invocationId, ownerBinding);
  } catch {
    return false;
  }
}
