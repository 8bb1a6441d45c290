/**
 * Immutable object generations. Keys are derived from identity, never "latest" names;
 * every object carries its SHA-256 (and the identity that wrote it) in metadata.
 */
export interface ObjectHead {
  key: string;
  size: number;
  /** User metadata as stored (lower-case keys). */
  metadata: Record<string, string>;
}

export interface StoredObject extends ObjectHead {
  bytes: Uint8Array;
}

/**
 * APPLIED: the bytes are stored. EXISTS: the store refused because the key is taken
 * (`If-None-Match`), which says nothing about whose bytes they are. UNKNOWN: may or may
 * not be stored. The last two are resolved by reading the exact key and comparing identity.
 */
export type ObjectPutOutcome = { status: 'APPLIED' } | { status: 'EXISTS' } | { status: 'UNKNOWN'; reason: string };
export type ObjectDeleteOutcome = { status: 'APPLIED' } | { status: 'UNKNOWN'; reason: string };

export interface ObjectStore {
  /**
   * Where this store keeps objects, as an absolute path-like name (`/s3/<bucket>`). A
   * delivery seals its work root under it, so recovery can tell a run moved to another
   * bucket from the one it sealed.
   */
  readonly location: string;
  /**
   * Writes bytes under an exact key with `If-None-Match: *` (S3 and the local emulator
   * refuse a taken key: EXISTS, which says nothing about whose bytes are there). UNKNOWN
   * means the bytes may or may not be there; resolve by `head`/`get` of the exact key.
   */
  put(cutPoint: string, key: string, bytes: Uint8Array, metadata: Record<string, string>): Promise<ObjectPutOutcome>;
  /**
   * Server-side copy of the bytes under `sourceKey` to a new exact key `targetKey`, with
   * `metadata` replacing the source's (it must carry the expected `sha256`): no byte passes
   * through the caller. Create-only like `put` (`If-None-Match: *`); the same outcomes: EXISTS and UNKNOWN are resolved by reading the
   * exact target back and comparing metadata and the full SHA-256 (`copyExact`). The store
   * does not verify the copied bytes: whoever relies on the target verifies them.
   */
  copy(
    cutPoint: string,
    sourceKey: string,
    targetKey: string,
    metadata: Record<string, string>,
  ): Promise<ObjectPutOutcome>;
  head(key: string): Promise<ObjectHead | undefined>;
  /**
   * Raw bytes; callers verify them (see `readVerified`). With `cutPoint` the GET runs
   * through the fault injector there (a reader's provider read, e.g. `stream.read.provider`).
   */
  get(key: string, cutPoint?: string): Promise<StoredObject | undefined>;
  delete(cutPoint: string, key: string): Promise<ObjectDeleteOutcome>;
  /**
   * Deletes up to 1,000 exact keys in one request (S3 DeleteObjects); a key already absent
   * counts as deleted. APPLIED: every key is gone. A key the store refused to delete is a
   * definite failure (EffectFailed, naming how many); UNKNOWN: some may be gone — list again.
   */
  deleteMany(cutPoint: string, keys: readonly string[]): Promise<ObjectDeleteOutcome>;
  list(prefix: string): Promise<string[]>;
  /**
   * One bounded page of keys under `prefix`, in key order, after `startAfter`: what a step
   * whose work must not grow with the bucket (GC's scanner) lists with.
   */
  listPage?(
    prefix: string,
    options: { startAfter?: string; limit: number },
  ): Promise<{ objects: Array<{ key: string; size: number }>; more: boolean }>;
}
