import type { SourceRelation } from './manifest-types.js';
import type { SealedWindow } from './window.js';

/**
 * The values and requests the delivery source's contract (src/ports/source.ts) speaks in:
 * JSON row values, source keys, the relation, window and resume position of a read. Pure
 * data: the port and the request checks every adapter shares (source-rules.ts) both read
 * them from here.
 */

/** A JSON value: what a source row's values are. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** A row's position in the source order: `[time, ...keyColumns]` values, as in the row. */
export type SourceKey = JsonValue[];

export interface SourceRelationRequest {
  from: SourceRelation;
  /** UTC time column; the window bounds it, half-open. An SQL identifier. */
  timeColumn: string;
  /** The business key; with the time column it orders rows. At least one SQL identifier. */
  keyColumns: string[];
}

export interface CountWindowRequest extends SourceRelationRequest {
  window: SealedWindow;
  signal?: AbortSignal;
}

export interface StreamWindowRequest extends CountWindowRequest {
  /** Rows per chunk: 1..MAX_CHUNK_ROWS. */
  chunkRows: number;
  /** A chunk is also cut once its canonical JSONL reaches this many characters (the part's `chunkText`, parts.ts). */
  chunkText?: number;
  /**
   * Resume a part after its last journaled chunk instead of from its first row: rows up to
   * and including position `lastKey` (the `sourceKeyOf` of the last row already chunked)
   * are skipped server-side (a keyset `(time, keys) >= lastKey`, never OFFSET), then the
   * first `rowsAtLastKey` rows tied on exactly `lastKey` are skipped too, and the first
   * chunk emitted carries seq `nextSeq`. Without it, seqs start at `firstSeq` (default 0).
   */
  resumeAfter?: ResumePosition;
  /** Seq of the first chunk when not resuming (a part's seqs start at `chunkSeqOf(part, 0)`). */
  firstSeq?: number;
}

/**
 * Where a resumed stream starts. The read must find at least `rowsAtLastKey` rows tied on
 * `lastKey` (they are in the sealed window, which never changes); fewer means the source
 * changed under the window: `delivery.source_resume_mismatch` (ValidationError).
 */
export interface ResumePosition {
  lastKey: SourceKey;
  /** Rows whose whole order key equals `lastKey` that were already chunked (>= 1). */
  rowsAtLastKey: number;
  nextSeq: number;
}

export interface CountBucketsRequest extends CountWindowRequest {
  /** The window [start, end) is cut into this many equal time buckets (1..4096, the last one ends at `end`). */
  buckets: number;
}
