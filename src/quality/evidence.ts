import { canonicalJson, sha256Hex } from '../domain/digest.js';
import type { EvidenceRead } from '../domain/quality/evidence.js';
import { putExact, type ExactPutResult } from '../objects/exact-object.js';
import type { ObjectStore } from '../ports/objects.js';

/**
 * The capsule's evidence objects in S3 (docs/rules.md#quality-evidence: missing or inaccessible
 * evidence is never a pass): written once with `putExact` (canonical bytes, so a re-run writes
 * the same SHA-256), and fetched as exactly one of found (the bytes), absent (the store
 * answered that no object is under the key) or unreadable (the read itself failed: denied,
 * timeout, 5xx). The domain's readers (src/domain/quality/evidence.ts: readPreparedDocument,
 * readCompletionDocument, completionWitnessOf) then verify the bytes — SHA-256, shape,
 * recomputed digests — so the four classes valid / missing / malformed / unreadable are decided
 * in one place.
 */

/** The canonical bytes of an evidence document and their SHA-256: identical on every re-run. */
export function evidenceBytes(document: object): { bytes: Uint8Array; sha256: string } {
  const bytes = Buffer.from(canonicalJson(document), 'utf8');
  return { bytes, sha256: sha256Hex(bytes) };
}

/** Writes the document once under `key` (a lost response or a crash after the PUT resolves by exact read-back). */
export async function putEvidence(
  objects: ObjectStore,
  cutPoint: string,
  key: string,
  document: object & { kind: string },
  invocationId: string,
): Promise<ExactPutResult> {
  const { bytes, sha256 } = evidenceBytes(document);
  return putExact(objects, cutPoint, key, bytes, { sha256, invocation: invocationId, kind: document.kind });
}

/** The raw evidence under `key`, or why there is none; never throws for a failed read. */
export async function fetchEvidence(objects: ObjectStore, key: string): Promise<EvidenceRead> {
  try {
    const stored = await objects.get(key);
    return stored ? { status: 'found', bytes: Buffer.from(stored.bytes).toString('utf8') } : { status: 'absent' };
  } catch {
    return { status: 'unreadable' };
  }
}
