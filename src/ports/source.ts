import type {
  CountBucketsRequest,
  CountWindowRequest,
  SourceKey,
  SourceRelationRequest,
  StreamWindowRequest,
} from '../domain/delivery/source-types.js';
import type { TargetRow } from '../domain/delivery/target-types.js';

/**
 * The delivery source (issue 4): one sealed window of a ClickHouse relation, read as a
 * stream of chunks. Production talks HTTP to a ClickHouse server; locally the same
 * adapter runs on embedded chdb (see src/adapters/clickhouse/source.ts).
 *
 * Contract every adapter keeps:
 * - Rows are exactly those whose `timeColumn` lies in the half-open window
 *   [start, end), bound as query parameters (never interpolated).
 * - Rows come in ONE deterministic order: by (timeColumn, ...keyColumns), and rows that
 *   tie on that whole key by their canonical JSONL line. A re-extraction of the same
 *   (unchanged) window therefore yields the same chunks, byte for byte, under the same
 *   seqs — which is what lets recovery and audits compare SHA-256 digests.
 * - Chunks are cut as rows arrive: every chunk but the last holds exactly `chunkRows`
 *   rows, seqs are contiguous from `firstSeq` (default 0), and at most one chunk (plus one group of rows
 *   tied on the whole key) is held in memory. An empty window yields no chunks.
 * - Values are JSON values, normalised so they survive a JSONL round trip unchanged (so
 *   `chunkDigest` of the extracted rows equals `chunkDigest` of the rows re-read from the
 *   chunk object):
 *     - DateTime / DateTime64 → ISO-8601 UTC text with `Z`, with the column's own
 *       precision: `2026-11-01T10:00:00Z` (DateTime), `2026-11-01T10:00:00.123Z`
 *       (DateTime64(3)), `…00.123456Z` (DateTime64(6)). A column declared in another
 *       time zone is converted to UTC. Date / Date32 → `YYYY-MM-DD`.
 *     - 64-bit and wider integers and all Decimals → decimal text (`"18446744073709551615"`,
 *       `"12.5"`): exact, never a lossy JS number. Smaller integers and floats → JSON
 *       numbers; float NaN/±Inf → `"nan"`, `"inf"`, `"-inf"`.
 *     - Strings, UUID, IP, Enum → strings; Bool → true/false; NULL → null; Array → array;
 *       Tuple → object (named) or array; Map → object.
 *   Strings stay strings: nothing is re-parsed into a Date, BigInt or Buffer.
 * - Every identifier (database, table, time and key columns) is validated before any
 *   query, and quoted by the adapter. A `query` relation (one SELECT/WITH, checked by the
 *   manifest) is wrapped as a subquery and bounded outside it.
 *
 * The values and requests it speaks in are in src/domain/delivery/source-types.ts, the
 * request checks and source keys in src/domain/delivery/source-rules.ts, the errors
 * in src/domain/delivery/source-errors.ts, the recovery fence in src/delivery/source-guard.ts.
 */

export interface SourceColumn {
  name: string;
  /** The engine's own spelling of the type, e.g. `DateTime64(3, 'UTC')`, `Nullable(String)`. */
  type: string;
}

/** Rows per time bucket, every bucket listed (zero counts too), in time order. */
export interface BucketCount {
  /** Canonical ISO UTC instants, half-open [start, end). */
  start: string;
  end: string;
  rows: number;
}

export interface SourceChunk {
  /** Contiguous from the request's `firstSeq` (default 0) or `resumeAfter.nextSeq`. */
  seq: number;
  /** The relation's columns in output order; every row has exactly these keys, in this order. */
  columns: string[];
  /** 1..chunkRows rows, in source order. */
  rows: TargetRow[];
  /**
   * Per row, where known: the row's canonical JSONL line without its newline — the
   * source's own text where it proved it canonical (src/domain/delivery/line-proof.ts), or
   * spelled (src/domain/delivery/canonical-line.ts) when the chunk is cut by text. The
   * encode takes it instead of spelling the row again; the bytes are the same either way.
   */
  lines?: Array<string | undefined>;
  /** `sourceKeyOf` the first and the last row. */
  firstKey: SourceKey;
  lastKey: SourceKey;
}

export interface SourcePort {
  /** Output columns of the relation, in order, without reading rows. */
  describe(request: SourceRelationRequest): Promise<SourceColumn[]>;
  /**
   * The window's rows as chunks (see the contract above). Validation errors are thrown
   * before any query; the query itself starts on the first `next()`. Breaking out of the
   * iteration cancels the query.
   */
  streamWindow(request: StreamWindowRequest): AsyncIterable<SourceChunk>;
  /** Rows in the window, for the quality probes and the bench. */
  countWindow(request: CountWindowRequest): Promise<number>;
  /**
   * Rows per equal time bucket of the window (one GROUP BY, read-only): what begin sizes
   * the window's parts from (src/domain/delivery/parts.ts `planParts`).
   */
  countBuckets(request: CountBucketsRequest): Promise<BucketCount[]>;
  close(): Promise<void>;
}
