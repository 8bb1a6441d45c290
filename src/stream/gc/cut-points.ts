/**
 * Every effect of stream GC and of the reader leases, by name (docs/rules.md#gc,
 * docs/rules.md#reader-leases). They are part of STREAM_CUT_POINTS.
 */
export const GC_CUT_POINTS = {
  /** A lifecycle root created (ACTIVE, epoch 1), renewed for a late object (epoch + 1) or its fate noted. */
  root: 'stream.gc.root',
  /** ACTIVE → MARKED, and a fresh scanner's MARKED → ACTIVE when the evidence no longer holds. */
  mark: 'stream.gc.mark',
  /** MARKED → DELETING: the root seals its delete journal (delete id, exact identity, epoch, policy digest). */
  seal: 'stream.gc.seal',
  /** Before a committed attempt's WAL object is deleted: its collected record (collected#<attempt>). */
  evidence: 'stream.gc.evidence',
  /**
   * The journal records that its one DELETE goes out (before it is sent): an object still
   * there afterwards may be an identical late object, never deleted under this epoch.
   */
  send: 'stream.gc.send',
  /** The object DELETE itself. */
  delete: 'stream.gc.delete',
  /** DELETING → DELETED once the exact object is absent. */
  finalize: 'stream.gc.finalize',
  /**
   * GC's own records retired: a DELETED root one grace after its delete, an expired reader
   * lease, a time-marked attempt's collected record or spent marker past its window once its
   * WAL objects are gone (conditional deletes).
   */
  retention: 'stream.gc.retire',
  /** A reader's lease: ConditionCheck on the root + Put of the lease, one transaction. */
  pin: 'stream.read.pin',
  release: 'stream.read.release',
} as const;

/** The cut points the GC flow crosses (the GC fault matrix runs each of them). */
export const GC_FLOW_CUT_POINTS = [
  GC_CUT_POINTS.root,
  GC_CUT_POINTS.mark,
  GC_CUT_POINTS.seal,
  GC_CUT_POINTS.evidence,
  GC_CUT_POINTS.send,
  GC_CUT_POINTS.delete,
  GC_CUT_POINTS.finalize,
  GC_CUT_POINTS.retention,
] as const;
