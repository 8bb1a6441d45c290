import { sha256Hex } from '../domain/digest.js';
import { ChecksumMismatchError, IdentityConflictError, ObjectMissingError, OutcomeUnknownError } from '../domain/errors.js';
import type { ObjectStore, StoredObject } from '../ports/objects.js';

/**
 * Reads an object and verifies every byte against the checksum its referencing authority
 * item recorded. Never returns unverified bytes. `cutPoint` names the GET for the fault
 * injector (a reader's provider read).
 */
export async function readVerified(objects: ObjectStore, key: string, sha256: string, cutPoint?: string): Promise<StoredObject> {
  const stored = await objects.get(key, cutPoint);
  if (!stored) throw new ObjectMissingError(key);
  const actual = sha256Hex(stored.bytes);
  if (actual !== sha256) throw new ChecksumMismatchError(key, sha256, actual);
  return stored;
}

/**
 * How an exact object write ended: WRITTEN by this call, or REUSED because the exact
 * identity (same key, same metadata, same full SHA-256) was already there — a lost
 * response, a crash after the PUT, or another worker recomputing the same task.
 */
export type ExactPutResult = { status: 'WRITTEN' | 'REUSED'; key: string; sha256: string; size: number };

/**
 * Writes immutable bytes under a key derived from their identity. `metadata` must carry
 * `sha256`. A lost response or a refused `If-None-Match` is resolved by reading the exact
 * key back and comparing metadata and the full SHA-256 of the bytes; anything else under
 * the key is an identity conflict, never success.
 */
export async function putExact(
  objects: ObjectStore,
  cutPoint: string,
  key: string,
  bytes: Uint8Array,
  metadata: Record<string, string> & { sha256: string },
  attempts = 2,
): Promise<ExactPutResult> {
  const result = (status: ExactPutResult['status']): ExactPutResult => ({ status, key, sha256: metadata.sha256, size: bytes.byteLength });
  let reason = '';
  for (let attempt = 0; attempt < attempts; attempt++) {
    const outcome = await objects.put(cutPoint, key, bytes, metadata);
    if (outcome.status === 'APPLIED') return result('WRITTEN');
    if (outcome.status === 'UNKNOWN') reason = outcome.reason;
    const found = await probeExact(objects, key, metadata);
    if (found === 'MATCH') return result('REUSED');
    if (found === 'CONFLICT') {
      throw new IdentityConflictError('objects.identity_conflict', `object ${key} exists with a different identity`);
    }
    // ABSENT after UNKNOWN: the PUT did not land; the bytes are deterministic, so again.
  }
  throw new OutcomeUnknownError(cutPoint, `${cutPoint}: object ${key} still unresolved (${reason})`);
}

/**
 * `putExact` for bytes that already exist in the store: a server-side copy of `sourceKey`
 * to the exact `targetKey` with `metadata` (carrying the expected `sha256`; `size` is the
 * source's recorded size). No byte passes through the caller, so WRITTEN says only that the
 * store copied: the bytes are verified (full SHA-256 and metadata) by whoever relies on
 * them before they become visible — the generation commit. A lost response or a refused
 * `If-None-Match` is resolved as in `putExact`, by reading the exact target back.
 */
export async function copyExact(
  objects: ObjectStore,
  cutPoint: string,
  source: { key: string; size: number },
  targetKey: string,
  metadata: Record<string, string> & { sha256: string },
  attempts = 2,
): Promise<ExactPutResult> {
  const result = (status: ExactPutResult['status']): ExactPutResult => ({ status, key: targetKey, sha256: metadata.sha256, size: source.size });
  let reason = '';
  for (let attempt = 0; attempt < attempts; attempt++) {
    const outcome = await objects.copy(cutPoint, source.key, targetKey, metadata);
    if (outcome.status === 'APPLIED') return result('WRITTEN');
    if (outcome.status === 'UNKNOWN') reason = outcome.reason;
    const found = await probeExact(objects, targetKey, metadata);
    if (found === 'MATCH') return result('REUSED');
    if (found === 'CONFLICT') {
      throw new IdentityConflictError('objects.identity_conflict', `object ${targetKey} exists with a different identity`);
    }
    // ABSENT after UNKNOWN: the copy did not land; copying the immutable source again is safe.
  }
  throw new OutcomeUnknownError(cutPoint, `${cutPoint}: copy to ${targetKey} still unresolved (${reason})`);
}

/**
 * Compares what is under `key` with an exact identity: every metadata field, and the full
 * SHA-256 of the stored bytes against the metadata's own.
 */
export async function probeExact(
  objects: ObjectStore,
  key: string,
  metadata: Record<string, string> & { sha256: string },
): Promise<'MATCH' | 'ABSENT' | 'CONFLICT'> {
  const stored = await objects.get(key);
  if (!stored) return 'ABSENT';
  const metadataMatches = Object.entries(metadata).every(([k, v]) => stored.metadata[k] === v);
  if (!metadataMatches) return 'CONFLICT';
  return sha256Hex(stored.bytes) === metadata.sha256 ? 'MATCH' : 'CONFLICT';
}
