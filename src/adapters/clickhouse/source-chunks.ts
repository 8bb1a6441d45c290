import { canonicalJson } from '../../domain/digest.js';
import { ValidationError } from '../../domain/errors.js';
import type { SourceChunk } from '../../ports/source.js';
import type { ResumePosition } from '../../domain/delivery/source-types.js';
import { SourceUnavailableError } from '../../domain/delivery/source-errors.js';
import { orderColumnsOf, sourceKeyOf, sourceKeyText } from '../../domain/delivery/source-rules.js';
import type { TargetRow } from '../../domain/delivery/target-types.js';
import { LineProof } from '../../domain/delivery/line-proof.js';
import { LineSpeller } from '../../domain/delivery/canonical-line.js';

/** Floor of the tie-group limit: a group larger than this and than a chunk is refused. */
export const MIN_TIED_ROWS_LIMIT = 10_000;

export interface ChunkingPlan {
  columns: string[];
  timeColumn: string;
  keyColumns: string[];
  chunkRows: number;
  /** A chunk is also cut once its rows' canonical lines (with their newlines) reach this many characters. */
  chunkText?: number;
  /** Seq of the first chunk yielded. */
  firstSeq: number;
  /** When resuming: the rows tied on `lastKey` already chunked are dropped first. */
  resume?: ResumePosition;
}

/**
 * Cuts the JSONEachRow lines of the ordered window read into chunks, as they arrive: one
 * chunk of parsed rows plus one tie group is all it holds. Rows equal on (time, keys) are
 * adjacent in the ClickHouse order; the group (at most `max(chunkRows, 10000)` rows, else
 * `delivery.source_order_ambiguous`) is emitted sorted by the canonical JSON of its values,
 * so even duplicate keys re-extract identically. When resuming, the read starts at the
 * keyset `>= lastKey`, so its first group must be the one tied on `lastKey` and hold at
 * least `rowsAtLastKey` rows, of which that many are dropped; anything else means the
 * sealed window's rows changed since they were chunked: `delivery.source_resume_mismatch`.
 */
export async function* chunksOf(lines: AsyncIterable<string[]>, plan: ChunkingPlan): AsyncGenerator<SourceChunk> {
  const { columns, timeColumn, keyColumns, chunkRows } = plan;
  const tiedLimit = Math.max(chunkRows, MIN_TIED_ROWS_LIMIT);
  const resumeKey = plan.resume ? sourceKeyText(plan.resume.lastKey) : undefined;
  let toSkip = plan.resume?.rowsAtLastKey ?? 0;
  let seq = plan.firstSeq;
  const proof = new LineProof(columns);
  // With a text limit every row's canonical line is known as it is added (proved, or spelled).
  const speller = plan.chunkText !== undefined ? new LineSpeller(columns) : undefined;
  const textLimit = plan.chunkText ?? Infinity;
  let currentText = 0;
  // A chunk's rows with their proved canonical lines (line-proof.ts), and the tie group's.
  let current: TargetRow[] = [];
  let currentLines: Array<string | undefined> = [];
  // The open tie group: its first row, and the rows tied with it (only once one is).
  let head: Row | undefined;
  let tied: Row[] | undefined;
  const chunk = (): SourceChunk => {
    const rows = current;
    const lines = currentLines;
    current = [];
    currentLines = [];
    currentText = 0;
    return {
      seq: seq++,
      columns,
      rows,
      lines,
      firstKey: sourceKeyOf(rows[0] as TargetRow, timeColumn, keyColumns),
      lastKey: sourceKeyOf(rows[rows.length - 1] as TargetRow, timeColumn, keyColumns),
    };
  };
  /** Adds a settled row to the chunk; true when the chunk is full (chunkRows rows, or chunkText characters). */
  const add = (settled: Row): boolean => {
    let { line } = settled;
    if (speller) {
      line ??= speller.line(settled.row, current.length);
      currentText += line.length + 1;
    }
    current.push(settled.row);
    currentLines.push(line);
    return current.length === chunkRows || currentText >= textLimit;
  };
  /** The settled rows of the group (`first` and `rest`), after any resume skip. */
  const release = (first: Row, rest: Row[] | undefined): Row[] => {
    let rows = settle(rest ? [first, ...rest] : [first], columns);
    if (toSkip > 0) {
      const groupKey = sourceKeyText(sourceKeyOf(first.row, timeColumn, keyColumns));
      if (groupKey !== resumeKey || rows.length < toSkip) throw resumeMismatch();
      rows = rows.slice(toSkip);
      toSkip = 0;
    }
    return rows;
  };
  const order = orderColumnsOf(timeColumn, keyColumns);
  for await (const batch of lines) {
    for (const line of batch) {
      const read = rowOf(line, columns, proof);
      if (head !== undefined) {
        // The common case (no tie) costs one comparison per order column, no key text.
        if (sameKey(head.row, read.row, order)) {
          (tied ??= []).push(read);
          if (tied.length >= tiedLimit) {
            throw new ValidationError(
              'delivery.source_order_ambiguous',
              `more than ${tiedLimit} source rows share one (time, key) value: the key columns do not order the window`,
            );
          }
          continue;
        }
        if (tied === undefined && toSkip === 0) {
          if (add(head)) yield chunk();
        } else {
          for (const settled of release(head, tied)) if (add(settled)) yield chunk();
          tied = undefined;
        }
      }
      head = read;
    }
  }
  if (head !== undefined) for (const settled of release(head, tied)) if (add(settled)) yield chunk();
  if (current.length > 0) yield chunk();
}

/** A parsed row, with its text where that is proved to be its canonical line. */
interface Row {
  row: TargetRow;
  line: string | undefined;
}

function resumeMismatch(): ValidationError {
  return new ValidationError(
    'delivery.source_resume_mismatch',
    'the source no longer holds the rows the resume position names (fewer rows tied on the last chunked key): the sealed window changed since it was chunked',
  );
}

/**
 * One parsed JSONEachRow line with exactly the described columns, in column order. The
 * engine writes the columns in that order, so the parsed object itself is the row (no
 * copy), and its text is its canonical line where `proof` accepts it; any other key
 * order is rebuilt in column order (and spelled by the encoder).
 */
function rowOf(line: string, columns: readonly string[], proof: LineProof): Row {
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(line) as Record<string, unknown>;
  } catch (error) {
    // Servers before 25.11 report a mid-stream failure as a text line in the body.
    const text = line.startsWith('Code:') ? `: ${line.slice(0, 300)}` : '';
    throw new SourceUnavailableError(`source stream broke off${text}`, { cause: error });
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new SourceUnavailableError('source row does not match the described columns');
  }
  // The keys in their own order, without an array of them per row (a parsed object
  // inherits no enumerable key, so for-in lists exactly Object.keys).
  let keys = 0;
  let ordered = true;
  for (const key in parsed) {
    if (key !== columns[keys]) ordered = false;
    keys++;
  }
  if (keys !== columns.length) throw new SourceUnavailableError('source row does not match the described columns');
  if (ordered) return { row: parsed, line: proof.accepts(line, parsed) ? line : undefined };
  const row: TargetRow = {};
  for (const c of columns) {
    if (!Object.hasOwn(parsed, c)) throw new SourceUnavailableError(`source row lacks column ${c}`);
    row[c] = parsed[c];
  }
  return { row, line: undefined };
}

/**
 * Whether two rows tie on the whole order key, as `sourceKeyText` equality decides it:
 * scalars by identity (JSON text of equal scalars is equal, and -0 spells 0), anything
 * else by its canonical JSON text.
 */
function sameKey(a: TargetRow, b: TargetRow, order: readonly string[]): boolean {
  for (const c of order) {
    const x = a[c] ?? null;
    const y = b[c] ?? null;
    if (x === y) continue;
    if (typeof x !== 'object' || typeof y !== 'object' || x === null || y === null) return false;
    if (canonicalJson(x) !== canonicalJson(y)) return false;
  }
  return true;
}

/** A tie group in its canonical order: by the canonical JSON of its values. */
function settle(group: Row[], columns: readonly string[]): Row[] {
  if (group.length < 2) return group;
  const keyed = group.map((read) => ({ read, text: canonicalJson(columns.map((c) => read.row[c])) }));
  keyed.sort((a, b) => (a.text < b.text ? -1 : a.text > b.text ? 1 : 0));
  return keyed.map((k) => k.read);
}
