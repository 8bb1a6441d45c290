import { TARGET_CUT_POINTS } from '../domain/delivery/target-rules.js';

/**
 * Every effect of bounded delivery, by name (docs/architecture.md, "Cut points and the fault
 * model"). The authority cut points are the conditional writes of journal/journaled-write.ts,
 * custody.ts and checkpoint.ts; the target cut points are run by the target adapters; the
 * rest name the flow's own effects so a fault spec (`CUTPOINT_FAULTS`) can address each of
 * them.
 */
export const DELIVERY_CUT_POINTS = {
  /**
   * Custody CAS: beginning an invocation (the seal, the invocation record and custody in
   * one transaction) and a recovery session taking custody over from an older one.
   */
  custodyAcquire: 'delivery.custody.acquire',
  /** A transition to a terminal state: journal and custody release in one transaction. */
  custodyRelease: 'delivery.custody.release',
  /** Every other journaled state change or fact record of an invocation. */
  journalTransition: 'delivery.journal.transition',
  /** The route checkpoint CAS, guarded by custody, journaled in the same transaction. */
  checkpointAdvance: 'delivery.checkpoint.advance',

  /** Journaling the owned stage's exact object id and owner binding. */
  stagingRecord: 'delivery.staging.record',
  /** The window's part plan object PUT (S3), before the writer starts. */
  planPut: 'delivery.plan.put',
  /** Extracted chunk object PUT (S3): the JSONL gzipped, `.jsonl.gz`. */
  chunkPut: 'delivery.chunk.put',
  /**
   * Starting a part: its empty head (must be absent), checked against the invocation's
   * carried version and the custody fence, in one transaction (parts/part-store.ts).
   */
  partClaim: 'delivery.part.claim',
  /**
   * Journaling a batch of up to 16 chunk receipts of one part (each chunk extracted,
   * written and loaded: seq, rows, bytes, sha256, key) with the part's head, fenced.
   */
  partReceipt: 'delivery.part.receipt',
  /** Evidence document PUT (S3); persisted before the checkpoint advances. */
  evidencePut: 'delivery.evidence.put',

  /** Deleting up to 1,000 expired work objects of a finished invocation (S3 DeleteObjects; src/delivery/expiry/). */
  expireDelete: 'delivery.expire.delete',
  /** Deleting a finished invocation's released-index entry once its work objects are gone. */
  expireForget: 'delivery.expire.forget',

  ...TARGET_CUT_POINTS,
} as const;

export type DeliveryCutPoint = (typeof DELIVERY_CUT_POINTS)[keyof typeof DELIVERY_CUT_POINTS];

export { TARGET_CUT_POINTS };
