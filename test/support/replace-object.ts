import type { ObjectStore } from '../../src/ports/objects.js';

/**
 * Replaces what a key holds — a test corrupting or tampering with a stored object. Writes
 * are create-only (`If-None-Match: *`) on S3 and on the local emulator alike, so the object
 * is deleted first; returns the put's status (APPLIED when the replacement landed).
 */
export async function replaceObject(
  objects: ObjectStore,
  key: string,
  bytes: Uint8Array,
  metadata: Record<string, string>,
): Promise<string> {
  await objects.delete('test.object.replace', key);
  return (await objects.put('test.object.replace', key, bytes, metadata)).status;
}
