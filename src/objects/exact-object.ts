import { sha256Hex } from '../domain/digest.js';
import {
  ChecksumMismatchError,
  IdentityConflictError,
  ObjectMissingError,
  OutcomeUnknownError,
} from '../domain/errors.js';
import type { ObjectPutOutcome, ObjectStore, StoredObject } from '../ports/objects.js';
import { contentOf } from './object-encoding.js';

/**
 * Reads an object and verifies every byte against the checksum its referencing authority
 * item recorded. Never returns unverified bytes. `cutPoint` names the GET for the fault
 * injector (a reader's provider read). An encoded object (object-encoding.ts: `encoding`
 * metadata) is decoded first: `bytes` is its content, the checksum is the content's, and
 * `size` stays what the store holds.
 */
export async function readVerified(
  objects: ObjectStore,
  key: string,
  sha256: string,
  cutPoint?: string,
): Promise<StoredObject> {
  const stored = await objects.get(key, cutPoint);
  if (!stored) throw new ObjectMissingError(key);
  const content = await contentOf(stored, sha256);
  const actual = sha256Hex(content);
  if (actual !== sha256) throw new ChecksumMismatchError(key, sha256, actual);
  return content === stored.bytes ? stored : { ...stored, bytes: content };
}

/**
 * How an exact object write ended: WRITTEN by this call, or REUSED because the exact
 * identity (same key, same metadata, same full SHA-256) was already there — a lost
 * response, a crash after the PUT, or another worker recomputing the same task.
 */
export type ExactPutResult = { status: 'WRITTEN' | 'REUSED'; key: string; sha256: string; size: number };

/**
 * Writes immutable bytes under a key derived from their identity. `metadata` must carry
 * `sha256` (of the content: with an `encoding`, of the decoded bytes, object-encoding.ts). A lost response or a refused `If-None-Match` is resolved by reading the exact
 * key back and comparing metadata and the full SHA-256 of the bytes; anything else under
 * the key is an identity conflict, never success.
 */
export function putExact(
  objects: ObjectStore,
  cutPoint: string,
  key: string,
  bytes: Uint8Array,
  metadata: Record<string, string> & { sha256: string },
  attempts = 2,
): Promise<ExactPutResult> {
  return writeExact(
    objects,
    cutPoint,
    key,
    metadata,
    bytes.byteLength,
    () => objects.put(cutPoint, key, bytes, metadata),
    attempts,
  );
}

/**
 * `putExact` for bytes that already exist in the store: a server-side copy of `sourceKey`
 * to the exact `targetKey` with `metadata` (carrying the expected `sha256`; `size` is the
 * source's recorded size). No byte passes through the caller, so WRITTEN says only that the
 * store copied: the bytes are verified (full SHA-256 and metadata) by whoever relies on
 * them before they become visible — the generation commit. A lost response or a refused
 * `If-None-Match` is resolved as in `putExact`, by reading the exact target back.
 */
export function copyExact(
  objects: ObjectStore,
  cutPoint: string,
  source: { key: string; size: number },
  targetKey: string,
  metadata: Record<string, string> & { sha256: string },
  attempts = 2,
): Promise<ExactPutResult> {
  return writeExact(
    objects,
    cutPoint,
    targetKey,
    metadata,
    source.size,
    () => objects.copy(cutPoint, source.key, targetKey, metadata),
    attempts,
  );
}

/**
 * The one loop behind putExact and copyExact: write create-only; on a lost answer or a
 * taken key, read the exact key back — our identity there is success (REUSED), another
 * one is an identity conflict, absent after UNKNOWN means it did not land and writing the
 * same deterministic bytes again is safe.
 */
async function writeExact(
  objects: ObjectStore,
  cutPoint: string,
  key: string,
  metadata: Record<string, string> & { sha256: string },
  size: number,
  write: () => Promise<ObjectPutOutcome>,
  attempts: number,
): Promise<ExactPutResult> {
  const result = (status: ExactPutResult['status']): ExactPutResult => ({ status, key, sha256: metadata.sha256, size });
  let reason = '';
  for (let attempt = 0; attempt < attempts; attempt++) {
    const outcome = await write();
    if (outcome.status === 'APPLIED') return result('WRITTEN');
    if (outcome.status === 'UNKNOWN') reason = outcome.reason;
    const found = await probeExact(objects, key, metadata);
    if (found === 'MATCH') return result('REUSED');
    if (found === 'CONFLICT') {
      throw new IdentityConflictError('objects.identity_conflict', `object ${key} exists with a different identity`);
    }
  }
  throw new OutcomeUnknownError(cutPoint, `${cutPoint}: object ${key} still unresolved (${reason})`);
}

/**
 * Compares what is under `key` with an exact identity: every metadata field, and the full
 * SHA-256 of the stored content (decoded as its `encoding` says) against the metadata's own.
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
  const content = await contentOf(stored, metadata.sha256).catch(() => undefined);
  return content !== undefined && sha256Hex(content) === metadata.sha256 ? 'MATCH' : 'CONFLICT';
}
