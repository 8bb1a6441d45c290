import { canonicalJson, sha256Hex } from '../domain/digest.js';
import { putExact, type ExactPutResult } from '../objects/exact-object.js';
import type { ObjectStore } from '../ports/objects.js';

/**
 * The capsule's evidence objects (seed 000: "Missing or inaccessible evidence is not a
 * pass"): immutable JSON documents written once with `putExact`, and every read of one
 * classified into exactly one of four outcomes, none of which is a default:
 *
 * - valid: present, its SHA-256 is the one the authority recorded (when one is recorded),
 *   it parses as a JSON object, and its `kind` is the expected one;
 * - missing: the store answered that no object is under the key;
 * - malformed: present, but another SHA-256, not JSON, or not the expected kind;
 * - unreadable: the read itself failed (denied, timeout, 5xx): nothing is known.
 *
 * Only `valid` lets a caller proceed; the others carry the stable diagnostic the caller
 * reports (`quality.evidence_missing | _malformed | _unreadable`).
 */

export type EvidenceRead =
  | { status: 'valid'; document: Record<string, unknown>; sha256: string }
  | { status: 'missing'; code: 'quality.evidence_missing' }
  | { status: 'malformed'; code: 'quality.evidence_malformed'; why: 'checksum' | 'not_json' | 'kind' }
  | { status: 'unreadable'; code: 'quality.evidence_unreadable'; why: string };

/** The canonical bytes of an evidence document and their SHA-256: identical on every re-run. */
export function evidenceBytes(document: object): { bytes: Uint8Array; sha256: string } {
  const bytes = Buffer.from(canonicalJson(document), 'utf8');
  return { bytes, sha256: sha256Hex(bytes) };
}

/** Writes the document once under `key` (a lost response or a crash after the PUT resolves by exact read-back). */
export async function putEvidence(objects: ObjectStore, cutPoint: string, key: string, document: object & { kind: string }, invocationId: string): Promise<ExactPutResult> {
  const { bytes, sha256 } = evidenceBytes(document);
  return putExact(objects, cutPoint, key, bytes, { sha256, invocation: invocationId, kind: document.kind });
}

/**
 * Reads and classifies the evidence under `key`. `sha256` is what the authority recorded;
 * without one (the completion document before its fact is journaled) the object's own
 * metadata checksum must match its bytes.
 */
export async function readEvidence(objects: ObjectStore, key: string, kind: string, sha256?: string): Promise<EvidenceRead> {
  let stored;
  try {
    stored = await objects.get(key);
  } catch (error) {
    return { status: 'unreadable', code: 'quality.evidence_unreadable', why: errorName(error) };
  }
  if (!stored) return { status: 'missing', code: 'quality.evidence_missing' };
  const actual = sha256Hex(stored.bytes);
  const expected = sha256 ?? stored.metadata.sha256;
  if (expected !== actual) return { status: 'malformed', code: 'quality.evidence_malformed', why: 'checksum' };
  let document: unknown;
  try {
    document = JSON.parse(Buffer.from(stored.bytes).toString('utf8'));
  } catch {
    return { status: 'malformed', code: 'quality.evidence_malformed', why: 'not_json' };
  }
  if (!isRecord(document)) return { status: 'malformed', code: 'quality.evidence_malformed', why: 'not_json' };
  if (document.kind !== kind) return { status: 'malformed', code: 'quality.evidence_malformed', why: 'kind' };
  return { status: 'valid', document, sha256: actual };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The error's stable name only: a message may carry a bucket, a key or a request id. */
function errorName(error: unknown): string {
  const name = (error as { name?: unknown } | null)?.name;
  return typeof name === 'string' && /^[A-Za-z0-9_.]{1,64}$/.test(name) ? name : 'Error';
}
