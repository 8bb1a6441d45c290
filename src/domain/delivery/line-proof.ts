import type { TargetRow } from './target-types.js';

/**
 * Proves a source's own JSON text of a row to be that row's canonical line, so the encode
 * can take the text instead of spelling the row again (the source parses every line
 * anyway). `accepts(line, row)` holds only when `row` is `JSON.parse(line)` with the
 * columns as keys in order, every value is a string, null or boolean, and `line` has
 * exactly the length of the canonical line. Why length is enough: a string token is at
 * least its value's length + 2 (its quotes), and exactly that only when it holds no escape
 * (every escape is longer than the character it stands for); `null`, `true`, `false` have
 * one spelling. At the canonical length there is then no escape, no whitespace and no
 * repeated key (each adds length), so the tokens are the value's own characters between
 * quotes, in column order — which is how `JSON.stringify` spells a string with no `"`,
 * `\`, control character or lone surrogate, and an escape-free token cannot hold the first
 * three, nor text decoded from UTF-8 (every source line is) the last. Numbers are not
 * taken (one value has spellings of one length: `1e2`, `100`): the encoder spells those rows.
 */
export class LineProof {
  /** Braces, commas, and each key's quoted name and colon; -1: no line is taken. */
  private readonly fixed: number;

  constructor(private readonly columns: readonly string[]) {
    const names = columns.map((c) => JSON.stringify(c));
    // A key that is an integer is listed first by JSON.parse whatever the text's order, so
    // keys in column order would not prove the line's own order: such columns take no line.
    this.fixed = columns.some((c) => /^[0-9]+$/.test(c))
      ? -1
      : 2 + (names.length - 1) + names.reduce((n, name) => n + name.length + 1, 0);
  }

  /** `row` must be `JSON.parse(line)` itself (not a copy), its keys the columns in order. */
  accepts(line: string, row: TargetRow): boolean {
    if (this.fixed < 0) return false;
    let length = this.fixed;
    const { columns } = this;
    for (let c = 0; c < columns.length; c++) {
      const value = row[columns[c] as string];
      if (typeof value === 'string') length += value.length + 2;
      else if (value === null || value === true) length += 4;
      else if (value === false) length += 5;
      else return false;
    }
    return length === line.length;
  }
}
