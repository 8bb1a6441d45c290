import { ValidationError } from '../errors.js';
import { validateSealedWindow, type SealedWindow } from './window.js';

/**
 * Parts: a window split into sub-windows that extract and load independently
 * (docs/rules.md#delivery-parts: bounded delivery at production size, docs/rules.md#scale). Pure rules, no I/O.
 *
 * Begin counts the window's rows per equal time bucket (`bucketsOf`), merges contiguous
 * buckets into parts of at most `partRows` rows (`planParts`; a single bucket holding
 * more stays one part: rows with one time value are never split), writes the plan to S3
 * and journals its SHA-256 when the writer starts. Parts are half-open time ranges that tile the window exactly, so
 * every row of the window belongs to exactly one part, and the source order inside a part
 * is the window's order restricted to it.
 *
 * Chunk seqs are global across parts and ordered like the rows: part p's chunk i has seq
 * `chunkSeqOf(p, i) = p * MAX_CHUNKS_PER_PART + i`, which fits the stage's 32-bit chunk
 * column for every plan `planParts` can produce.
 */

export const MAX_CHUNKS_PER_PART = 100_000;
export const MAX_PARTS = 20_000;
/** Every seq any plan can use is below this (2·10^9 < 2^31: the stage's chunk column is 32-bit). */
export const SEQ_LIMIT = MAX_PARTS * MAX_CHUNKS_PER_PART;
/** Buckets begin counts the window in: enough resolution to size parts, one GROUP BY. */
export const PLAN_BUCKETS = 1024;

export interface TimeRange {
  /** Canonical ISO UTC instants, half-open [start, end). */
  start: string;
  end: string;
}

export interface PartDescriptor extends TimeRange {
  /** 0-based, contiguous; the Distributed Map's item. */
  part: number;
  /** Rows counted in the part when the plan was made (a sizing figure, not a proof). */
  plannedRows: number;
  /**
   * A chunk is also cut once its canonical JSONL reaches this many characters (UTF-16 code
   * units), whatever chunk_rows says: the part Task's memory holds a few chunks, so wide
   * rows must not make one chunk outgrow it. Set by the plan (`CHUNK_TEXT_LIMIT`), so a
   * part is cut the same way on every re-extraction, whatever version re-extracts it;
   * absent in plans made before it (rows only).
   */
  chunkText?: number;
}

/**
 * The characters of canonical JSONL a chunk holds at most (`PartDescriptor.chunkText`):
 * 16 Mi, at most 48 MiB of UTF-8. The part Task holds about three chunks, each as rows,
 * lines, bytes and COPY text, well inside its 1,024 MB.
 */
export const CHUNK_TEXT_LIMIT = 16 * 1024 * 1024;

const invalid = (message: string) => new ValidationError('delivery.part_plan_invalid', message);

export function chunkSeqOf(part: number, index: number): number {
  if (!Number.isSafeInteger(part) || part < 0 || part >= MAX_PARTS)
    throw invalid(`part must be an integer in [0, ${MAX_PARTS})`);
  if (!Number.isSafeInteger(index) || index < 0 || index >= MAX_CHUNKS_PER_PART) {
    throw new ValidationError(
      'delivery.part_too_large',
      `a part holds at most ${MAX_CHUNKS_PER_PART} chunks; lower part_rows or raise chunk_rows`,
    );
  }
  return part * MAX_CHUNKS_PER_PART + index;
}

/** The seqs part `part` may use: [from, to). */
export function seqRangeOf(part: number): { from: number; to: number } {
  return { from: chunkSeqOf(part, 0), to: chunkSeqOf(part, 0) + MAX_CHUNKS_PER_PART };
}

export function partOfSeq(seq: number): number {
  return Math.floor(seq / MAX_CHUNKS_PER_PART);
}

/** `buckets` equal time ranges tiling the window (fewer when the window has fewer milliseconds). */
export function bucketsOf(window: SealedWindow, buckets: number): TimeRange[] {
  const w = validateSealedWindow(window, 'delivery.part_plan_invalid');
  if (!Number.isInteger(buckets) || buckets < 1 || buckets > 4096)
    throw invalid('buckets must be an integer in [1, 4096]');
  const start = Date.parse(w.start);
  const end = Date.parse(w.end);
  const n = Math.min(buckets, end - start);
  const width = Math.floor((end - start) / n);
  const out: TimeRange[] = [];
  for (let i = 0; i < n; i++) {
    out.push({
      start: new Date(start + i * width).toISOString(),
      end: new Date(i === n - 1 ? end : start + (i + 1) * width).toISOString(),
    });
  }
  return out;
}

/**
 * Merges contiguous bucket counts (in time order, tiling the window) into parts of at most
 * `partRows` rows; a bucket over `partRows` is a part of its own. An empty window is one
 * part. Deterministic: the same counts give the same plan.
 */
export function planParts(counts: ReadonlyArray<TimeRange & { rows: number }>, partRows: number): PartDescriptor[] {
  if (!Number.isSafeInteger(partRows) || partRows < 1) throw invalid('partRows must be a positive integer');
  if (counts.length === 0) throw invalid('a plan needs at least one bucket');
  const parts: PartDescriptor[] = [];
  let current: PartDescriptor | undefined;
  for (const [i, bucket] of counts.entries()) {
    if (!Number.isSafeInteger(bucket.rows) || bucket.rows < 0)
      throw invalid('bucket counts must be non-negative integers');
    const previous = counts[i - 1];
    if (previous && previous.end !== bucket.start) throw invalid('buckets must be contiguous');
    if (current && current.plannedRows + bucket.rows <= partRows) {
      current.end = bucket.end;
      current.plannedRows += bucket.rows;
    } else {
      current = {
        part: parts.length,
        start: bucket.start,
        end: bucket.end,
        plannedRows: bucket.rows,
        chunkText: CHUNK_TEXT_LIMIT,
      };
      parts.push(current);
    }
  }
  if (parts.length > MAX_PARTS)
    throw invalid(`the window needs ${parts.length} parts; at most ${MAX_PARTS} (raise part_rows)`);
  return parts;
}

/**
 * A plan as read back (the plan object: a JSON array of part descriptors): parts 0..K-1,
 * in order, tiling `window` exactly. Anything else is `delivery.part_plan_invalid`.
 */
export function validatePlanParts(value: unknown, window: SealedWindow): PartDescriptor[] {
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_PARTS)
    throw invalid('the part plan must be a non-empty array of part descriptors');
  let at = window.start;
  const parts = value.map((v, i) => {
    const d = validatePartDescriptor(v);
    if (d.part !== i || d.start !== at) throw invalid(`part ${i} does not continue the plan`);
    at = d.end;
    return d;
  });
  if (at !== window.end) throw invalid('the part plan does not reach the window end');
  return parts;
}

export function validatePartDescriptor(value: unknown): PartDescriptor {
  const d = value as Partial<PartDescriptor> | null;
  if (
    !d ||
    typeof d !== 'object' ||
    !Number.isSafeInteger(d.part) ||
    (d.part as number) < 0 ||
    (d.part as number) >= MAX_PARTS
  ) {
    throw invalid('a part descriptor needs part, start, end, plannedRows');
  }
  if (!Number.isSafeInteger(d.plannedRows) || (d.plannedRows as number) < 0)
    throw invalid('a part descriptor needs plannedRows >= 0');
  if (d.chunkText !== undefined && !(Number.isSafeInteger(d.chunkText) && d.chunkText >= 1))
    throw invalid('a part descriptor chunkText must be a positive integer');
  const range = validateSealedWindow({ start: d.start, end: d.end } as SealedWindow, 'delivery.part_plan_invalid');
  return {
    part: d.part as number,
    start: range.start,
    end: range.end,
    plannedRows: d.plannedRows as number,
    ...(d.chunkText !== undefined ? { chunkText: d.chunkText } : {}),
  };
}
