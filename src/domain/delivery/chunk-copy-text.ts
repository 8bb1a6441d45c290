import { ValidationError } from '../errors.js';
import type { VerifiedChunk } from './chunk-json.js';

/** The columns a chunk's COPY text is for. */
export interface CopyTextColumns {
  columns: readonly string[];
  /** Per column: true when its type is json or jsonb (the value goes as JSON text). */
  jsonColumns: readonly boolean[];
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const CLOSE_OBJECT = 0x7d;
const NEWLINE = 0x0a;
const TAB = 0x09;

/** Characters COPY text must escape (backslash, newline, carriage return, the tab delimiter), by code point. */
const COPY_ESCAPES = new Map([
  [0x5c, BACKSLASH],
  [0x0a, 0x6e],
  [0x0d, 0x72],
  [0x09, 0x74],
]);

/** The bytes a number, true or false is spelled with. */
const SCALAR = new Uint8Array(256);
for (const c of '0123456789+-.eEtruefalse') SCALAR[c.charCodeAt(0)] = 1;

/** Returned when the chunk holds a value COPY text cannot carry with json_populate's meaning. */
class NotCopyable extends Error {}

/**
 * A chunk's canonical JSONL (src/delivery/chunk-codec.ts) as PostgreSQL `COPY … FROM STDIN`
 * text, one pass over the bytes, no row parsed into JS values. It takes only a chunk
 * checked as every bulk load checks it (chunk-json.ts `verifyChunkBytes`: digest, UTF-8,
 * one line per row), so what is loaded is exactly the bytes the receipt's SHA-256 names.
 *
 * Each line becomes one COPY line: the columns' values, tab-separated, then the chunk seq
 * (the stage's chunk column). A value means what `json_populate_recordset` makes of it,
 * which the COPY route must not change:
 * - null → `\N` (SQL NULL, in every column);
 * - a string → its text (JSON escapes decoded; COPY's own escapes for `\`, newline,
 *   carriage return, tab, backspace and form feed, which JSON spells the same way);
 * - a number, true or false → its spelling;
 * - in a `json`/`jsonb` column, any value but null → its JSON text, unchanged.
 *
 * Where COPY text cannot say the same thing, the answer is undefined and the caller loads
 * the chunk with `json_populate_recordset` instead: a nested array or object in a column
 * that is not json/jsonb (json_populate converts those to arrays and composites), a
 * `\u0000` (no PostgreSQL text holds it), a lone surrogate (not UTF-8).
 *
 * A line whose keys are not exactly the columns, in order, is refused
 * (`delivery.chunk_malformed`): canonical lines always are.
 */
export function chunkCopyText(chunk: VerifiedChunk, { columns, jsonColumns }: CopyTextColumns): Buffer | undefined {
  const { jsonl, rows, seq } = chunk;
  if (jsonColumns.length !== columns.length)
    throw new ValidationError('delivery.invalid_request', 'jsonColumns must name every column');
  const keys = columns.map((c, i) => Buffer.from(`${i === 0 ? '{' : ','}${JSON.stringify(c)}:`));
  const tail = Buffer.from(`\t${seq}\n`);
  const bytes = jsonl instanceof Buffer ? jsonl : Buffer.from(jsonl.buffer, jsonl.byteOffset, jsonl.byteLength);
  // The text is never longer than the chunk plus one byte per backslash plus the seq
  // column per row: keys are dropped, every escape keeps or shrinks its size, and only a
  // JSON column's backslashes double. So memory is about one more chunk, not two.
  let backslashes = 0;
  for (let b = bytes.indexOf(BACKSLASH); b !== -1; b = bytes.indexOf(BACKSLASH, b + 1)) backslashes++;
  const out = Buffer.allocUnsafe(bytes.byteLength + backslashes + rows * tail.byteLength);
  let at = 0;
  let o = 0;
  const malformed = (): never => {
    throw new ValidationError(
      'delivery.chunk_malformed',
      `chunk ${seq}: a line is not one JSON object with exactly the columns, in order`,
    );
  };
  try {
    while (at < bytes.byteLength) {
      for (let c = 0; c < columns.length; c++) {
        const key = keys[c] as Buffer;
        for (let k = 0; k < key.byteLength; k++) if (bytes[at + k] !== key[k]) malformed();
        at += key.byteLength;
        if (c > 0) out[o++] = TAB;
        const first = bytes[at];
        if (first === 0x6e /* n */) {
          if (bytes[at + 1] !== 0x75 || bytes[at + 2] !== 0x6c || bytes[at + 3] !== 0x6c) malformed();
          out[o++] = BACKSLASH;
          out[o++] = 0x4e; // N
          at += 4;
        } else if (jsonColumns[c]) {
          const end = endOfValue(bytes, at, malformed);
          for (; at < end; at++) {
            const b = bytes[at] as number;
            if (b < 0x20) malformed(); // no whitespace or raw control byte in canonical JSON
            if (b === BACKSLASH) out[o++] = BACKSLASH;
            out[o++] = b;
          }
        } else if (first === QUOTE) {
          // The common string, with no escape, inline: its bytes are its COPY text.
          let b = bytes[++at] as number;
          while (b !== QUOTE && b !== BACKSLASH && b >= 0x20) {
            out[o++] = b;
            b = bytes[++at] as number;
          }
          if (b === QUOTE) at++;
          else [at, o] = stringText(bytes, at, out, o, malformed);
        } else if (first === 0x7b /* { */ || first === 0x5b /* [ */) {
          throw new NotCopyable();
        } else {
          // A number, true or false: its spelling, up to the next comma or the line's end.
          const start = at;
          for (let b = bytes[at]; b !== COMMA && b !== CLOSE_OBJECT; b = bytes[at]) {
            if (b === undefined || !SCALAR[b]) malformed();
            out[o++] = b as number;
            at++;
          }
          if (at === start) malformed();
        }
      }
      if (bytes[at] !== CLOSE_OBJECT || bytes[at + 1] !== NEWLINE) malformed();
      at += 2;
      o += tail.copy(out, o);
    }
  } catch (error) {
    if (error instanceof NotCopyable) return undefined;
    throw error;
  }
  return out.subarray(0, o);
}

/**
 * A JSON string's content from `at` (just after its opening quote) to its closing quote,
 * written as COPY text; returns the positions after the closing quote and after the text.
 */
function stringText(bytes: Buffer, at: number, out: Buffer, o: number, malformed: () => never): [number, number] {
  for (;;) {
    const b = bytes[at];
    if (b === undefined || b < 0x20) malformed(); // JSON strings hold no raw control byte
    if (b === QUOTE) return [at + 1, o];
    if (b !== BACKSLASH) {
      out[o++] = b as number;
      at++;
      continue;
    }
    const e = bytes[at + 1];
    if (e === QUOTE || e === 0x2f /* / */) {
      out[o++] = e;
      at += 2;
    } else if (e === 0x75 /* u */) {
      let code = hex4(bytes, at + 2, malformed);
      at += 6;
      if (code >= 0xd800 && code <= 0xdbff && bytes[at] === BACKSLASH && bytes[at + 1] === 0x75) {
        const low = hex4(bytes, at + 2, malformed);
        if (low < 0xdc00 || low > 0xdfff) throw new NotCopyable();
        code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
        at += 6;
      } else if (code >= 0xd800 && code <= 0xdfff) throw new NotCopyable();
      if (code === 0) throw new NotCopyable();
      const escape = COPY_ESCAPES.get(code);
      if (escape !== undefined) {
        out[o++] = BACKSLASH;
        out[o++] = escape;
      } else o += utf8(code, out, o);
    } else if (e === BACKSLASH || e === 0x62 || e === 0x66 || e === 0x6e || e === 0x72 || e === 0x74) {
      // \\ \b \f \n \r \t: COPY text spells these escapes the same way.
      out[o++] = BACKSLASH;
      out[o++] = e;
      at += 2;
    } else malformed();
  }
}

/** Where the JSON value starting at `at` ends (exclusive): strings and nesting skipped whole. */
function endOfValue(bytes: Buffer, at: number, malformed: () => never): number {
  let depth = 0;
  let inString = false;
  for (; at < bytes.byteLength; at++) {
    const b = bytes[at];
    if (b === NEWLINE) malformed();
    if (inString) {
      if (b === BACKSLASH) at++;
      else if (b === QUOTE) {
        inString = false;
        if (depth === 0) return at + 1;
      }
    } else if (b === QUOTE) inString = true;
    else if (b === 0x7b || b === 0x5b) depth++;
    else if (b === 0x7d || b === 0x5d) {
      if (depth === 0) return at; // the line's closing brace ends a scalar
      if (--depth === 0) return at + 1;
    } else if (b === COMMA && depth === 0) return at;
  }
  return malformed();
}

function hex4(bytes: Buffer, at: number, malformed: () => never): number {
  let code = 0;
  for (let i = 0; i < 4; i++) {
    const b = bytes[at + i] as number;
    const digit =
      b >= 0x30 && b <= 0x39 ? b - 0x30 : b >= 0x61 && b <= 0x66 ? b - 0x57 : b >= 0x41 && b <= 0x46 ? b - 0x37 : -1;
    if (digit < 0) malformed();
    code = code * 16 + digit;
  }
  return code;
}

function utf8(code: number, out: Buffer, o: number): number {
  if (code < 0x80) {
    out[o] = code;
    return 1;
  }
  if (code < 0x800) {
    out[o] = 0xc0 | (code >> 6);
    out[o + 1] = 0x80 | (code & 0x3f);
    return 2;
  }
  if (code < 0x10000) {
    out[o] = 0xe0 | (code >> 12);
    out[o + 1] = 0x80 | ((code >> 6) & 0x3f);
    out[o + 2] = 0x80 | (code & 0x3f);
    return 3;
  }
  out[o] = 0xf0 | (code >> 18);
  out[o + 1] = 0x80 | ((code >> 12) & 0x3f);
  out[o + 2] = 0x80 | ((code >> 6) & 0x3f);
  out[o + 3] = 0x80 | (code & 0x3f);
  return 4;
}
