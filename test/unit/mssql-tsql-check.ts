import { Parser } from 'node-sql-parser/build/transactsql.js';

/**
 * An offline T-SQL check for the SQL Server adapter's batches (used by
 * mssql-grammar.test.ts): a small lexer splits a batch into its statements and IF
 * conditions (BEGIN … END blocks and ELSE unwrapped, every statement ended by `;`), then
 * every unit is parsed by node-sql-parser 5.4.0's `transactsql` grammar.
 *
 * Where that grammar lacks valid T-SQL the adapter needs, the gap is named here and
 * nowhere else, as small as it can be:
 * - REDUCTIONS rewrite one construct into the nearest one the grammar has, and the rest of
 *   the statement is still parsed (the test proves each is used and necessary);
 * - ALLOWLIST shapes are whole statements the grammar cannot parse at all, matched by a
 *   strict regex instead;
 * - OPENJSON's WITH schema is cut out for the parse and each entry is checked by
 *   WITH_ENTRY, its type parsed as `CAST(NULL AS type)`.
 * Stricter than the grammar: every bracketed identifier must be a plain identifier (the
 * adapter brackets only validated names), so an unbalanced `[` cannot hide inside one.
 */

export interface Reduction {
  name: string;
  why: string;
  apply(statement: string): string;
}

const sub = (pattern: RegExp, replacement: string) => (s: string) => s.replace(pattern, replacement);

export const REDUCTIONS: Reduction[] = [
  {
    name: 'INSERT target hint',
    why: 'the grammar has no table hint on an INSERT target (`INSERT INTO t WITH (TABLOCKX) (cols)`)',
    apply: sub(/^(INSERT INTO (?:\[\w+\]\.)?\[\w+\]) WITH \(\w+(?:, \w+)*\)/, '$1'),
  },
  {
    name: 'TABLOCKX',
    why: 'the grammar lists TABLOCK before TABLOCKX in one ordered choice, so TABLOCKX never matches (a parser bug); TABLOCK has the same place in the syntax',
    apply: sub(/\bTABLOCKX\b/g, 'TABLOCK'),
  },
  {
    name: 'COUNT_BIG',
    why: 'missing from the grammar’s aggregate functions; it has the syntax of COUNT',
    apply: sub(/\bCOUNT_BIG\(/g, 'COUNT('),
  },
  {
    name: 'SELECT … INTO',
    why: 'the grammar has no SELECT … INTO new_table',
    apply: sub(/^(SELECT [^;]*?) INTO \[\w+\]\.\[\w+\] FROM /, '$1 FROM '),
  },
  {
    name: 'EXEC @status =',
    why: 'the grammar has no return-status assignment on EXEC',
    apply: sub(/^EXEC @\w+ = /, 'EXEC '),
  },
  {
    name: 'TRUNCATE … WITH (PARTITIONS (n))',
    why: 'the grammar has TRUNCATE TABLE but not its partition list',
    apply: sub(/^(TRUNCATE TABLE \[\w+\]\.\[\w+\]) WITH \(PARTITIONS \(\d+\)\)$/, '$1'),
  },
  {
    name: '$PARTITION',
    why: 'the grammar has no $PARTITION.<function>(value) call; it has the syntax of a scalar function call',
    apply: sub(/\$PARTITION\.\[\w+\]\(/g, 'ABS('),
  },
  {
    name: 'UNIQUE CLUSTERED',
    why: 'the grammar has CREATE CLUSTERED INDEX but not with UNIQUE before CLUSTERED',
    apply: sub(/^CREATE UNIQUE CLUSTERED INDEX /, 'CREATE CLUSTERED INDEX '),
  },
];

/** Whole statements the grammar cannot parse, each matched exactly instead. */
export const ALLOWLIST: Array<{ name: string; why: string; shape: RegExp; lead?: RegExp }> = [
  { name: 'THROW', why: 'the grammar has no THROW statement', shape: /^THROW 51\d{3}, N'cutpoint: [a-z ,-]+', 1$/ },
  { name: 'RETURN', why: 'the grammar accepts RETURN only inside a function body', shape: /^RETURN$/ },
  {
    name: 'SWITCH',
    why: 'the grammar has no ALTER TABLE … SWITCH',
    lead: /^ALTER TABLE \S+ SWITCH\b/,
    shape: /^ALTER TABLE \[\w+\]\.\[\w+\] SWITCH TO \[\w+\]\.\[\w+\] PARTITION \d+$/,
  },
];

/** One OPENJSON WITH entry: positional alias, a type, a quoted JSON path, AS JSON only on nvarchar(max). */
export const WITH_ENTRY =
  /^\[c\d+(_json)?\] ([a-z0-9]+(?:\(\d+(?:,\d+)?\)|\(max\))?) N'(strict|lax) \$\."(?:[^"\\']|\\.|'')*"'( AS JSON)?$/;

export interface UnitResult {
  kind: 'statement' | 'condition';
  text: string;
  /** How it was checked: `grammar`, `grammar after <reductions>`, or `allowlist <name>`. */
  via: string;
  reductions: string[];
  error?: string;
}

const parser = new Parser();
const STARTS = new Set([
  'THROW',
  'BEGIN',
  'SELECT',
  'INSERT',
  'UPDATE',
  'DELETE',
  'CREATE',
  'ALTER',
  'DROP',
  'EXEC',
  'RETURN',
  'COMMIT',
  'ROLLBACK',
  'DECLARE',
  'SET',
  'IF',
  'MERGE',
]);

interface Token {
  text: string;
  start: number;
  end: number;
}

/** Tokens of a batch; throws on an unterminated string, bracket or comment, or a bracket that is not a plain identifier. */
export function tokenize(sql: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < sql.length) {
    const rest = sql.slice(i);
    const ws = /^\s+/.exec(rest);
    if (ws) {
      i += ws[0].length;
      continue;
    }
    let m: RegExpExecArray | null;
    if ((m = /^--[^\n]*/.exec(rest)) || (m = /^\/\*[\s\S]*?\*\//.exec(rest))) {
      i += m[0].length;
      continue;
    }
    if (rest.startsWith('/*')) throw new Error(`unterminated comment at ${i}`);
    if ((m = /^N?'(?:[^']|'')*'/.exec(rest))) {
      // matched a complete literal
    } else if (/^N?'/.test(rest)) {
      throw new Error(`unterminated string at ${i}`);
    } else if (rest.startsWith('[')) {
      m = /^\[(?:[^\]]|\]\])*\]/.exec(rest);
      if (!m) throw new Error(`unterminated bracket at ${i}`);
      if (!/^\[[A-Za-z_][A-Za-z0-9_]*\]$/.test(m[0]))
        throw new Error(`bracketed name ${m[0].slice(0, 40)} at ${i} is not a plain identifier`);
    } else {
      m = /^(@@?\w+|\w+|<>|<=|>=|\S)/.exec(rest);
    }
    const text = (m as RegExpExecArray)[0];
    tokens.push({ text, start: i, end: i + text.length });
    i += text.length;
  }
  return tokens;
}

/** The statements and IF conditions of a batch, in order. */
export function splitBatch(sql: string): Array<{ kind: 'statement' | 'condition'; text: string }> {
  const tokens = tokenize(sql);
  const units: Array<{ kind: 'statement' | 'condition'; text: string }> = [];
  const word = (t: Token | undefined) => t?.text.toUpperCase();
  let blocks = 0;
  let i = 0;
  while (i < tokens.length) {
    const w = word(tokens[i]);
    if (w === 'ELSE') {
      i++;
      continue;
    }
    if (w === 'BEGIN' && !['TRANSACTION', 'TRAN', 'TRY', 'CATCH'].includes(word(tokens[i + 1]) ?? '')) {
      blocks++;
      i++;
      continue;
    }
    if (w === 'END') {
      if (--blocks < 0) throw new Error('END without BEGIN');
      i += word(tokens[i + 1]) === ';' ? 2 : 1;
      continue;
    }
    let depth = 0;
    let cases = 0;
    let j = i + 1;
    if (w === 'IF') {
      for (; j < tokens.length; j++) {
        const t = tokens[j] as Token;
        if (t.text === '(') depth++;
        else if (t.text === ')') depth--;
        else if (depth === 0 && STARTS.has(t.text.toUpperCase())) break;
      }
      if (j >= tokens.length || depth !== 0)
        throw new Error(`IF without a statement after it: ${sql.slice(tokens[i]!.start, tokens[i]!.start + 60)}`);
      units.push({ kind: 'condition', text: sql.slice(tokens[i + 1]!.start, tokens[j - 1]!.end) });
      i = j;
      continue;
    }
    for (; j < tokens.length; j++) {
      const t = tokens[j] as Token;
      if (t.text === '(') depth++;
      else if (t.text === ')') depth--;
      else if (word(t) === 'CASE') cases++;
      else if (word(t) === 'END' && cases > 0) cases--;
      else if (depth === 0 && (t.text === ';' || word(t) === 'END')) break;
    }
    if (j >= tokens.length || tokens[j]!.text !== ';' || depth !== 0) {
      throw new Error(
        `statement not ended by ';' (or unbalanced parentheses): ${sql.slice(tokens[i]!.start, tokens[i]!.start + 80)}`,
      );
    }
    units.push({ kind: 'statement', text: sql.slice(tokens[i]!.start, tokens[j - 1]!.end) });
    i = j + 1;
  }
  if (blocks !== 0) throw new Error('BEGIN without END');
  return units;
}

export function parses(sql: string): string | undefined {
  try {
    parser.astify(sql, { database: 'transactsql' });
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message.slice(0, 200) : String(error);
  }
}

/** Comma-separated parts outside parentheses and string literals. */
function topLevelParts(list: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quoted = false;
  let from = 0;
  for (let k = 0; k < list.length; k++) {
    const c = list[k];
    if (c === "'") quoted = !quoted;
    else if (!quoted && c === '(') depth++;
    else if (!quoted && c === ')') depth--;
    else if (!quoted && depth === 0 && c === ',') {
      parts.push(list.slice(from, k).trim());
      from = k + 1;
    }
  }
  return [...parts, list.slice(from).trim()];
}

/** Cuts OPENJSON's WITH schema out (checking each entry), leaving `OPENJSON(@x) AS j` for the grammar. */
function withoutOpenJsonSchema(statement: string): { text: string; errors: string[] } {
  const at = statement.search(/OPENJSON\(@\w+\) WITH \(/);
  if (at < 0) return { text: statement, errors: [] };
  const open = statement.indexOf('(', statement.indexOf(' WITH (', at));
  let depth = 0;
  let close = open;
  for (; close < statement.length; close++) {
    if (statement[close] === '(') depth++;
    else if (statement[close] === ')' && --depth === 0) break;
  }
  const errors: string[] = [];
  for (const entry of topLevelParts(statement.slice(open + 1, close))) {
    const m = WITH_ENTRY.exec(entry);
    if (!m) errors.push(`OPENJSON WITH entry does not have the allowed shape: ${entry}`);
    else if (m[4] && m[2] !== 'nvarchar(max)') errors.push(`AS JSON needs nvarchar(max): ${entry}`);
    else if (parses(`SELECT CAST(NULL AS ${m[2]})`)) errors.push(`OPENJSON WITH type does not parse: ${m[2]}`);
  }
  return { text: statement.slice(0, statement.indexOf(' WITH (', at)) + statement.slice(close + 1), errors };
}

/** Checks one unit: allowlist shape, or the grammar (after the reductions it needs). */
export function checkUnit(unit: { kind: 'statement' | 'condition'; text: string }, skip?: string): UnitResult {
  const text = unit.text.replace(/\s+/g, ' ').trim();
  if (unit.kind === 'statement') {
    for (const allowed of ALLOWLIST) {
      if ((allowed.lead ?? new RegExp(`^${allowed.name}\\b`)).test(text)) {
        const error = allowed.shape.test(text) ? undefined : `does not match the ${allowed.name} shape`;
        return { kind: unit.kind, text, via: `allowlist ${allowed.name}`, reductions: [], ...(error ? { error } : {}) };
      }
    }
  }
  const schema = withoutOpenJsonSchema(unit.kind === 'condition' ? `IF ${text} SELECT 1` : text);
  let reduced = schema.text;
  const reductions: string[] =
    schema.text === (unit.kind === 'condition' ? `IF ${text} SELECT 1` : text) ? [] : ['OPENJSON WITH schema'];
  for (const r of REDUCTIONS) {
    if (r.name === skip) continue;
    const next = r.apply(reduced);
    if (next !== reduced) reductions.push(r.name);
    reduced = next;
  }
  const error = schema.errors[0] ?? parses(reduced);
  const via = reductions.length ? `grammar after ${reductions.join(', ')}` : 'grammar';
  return { kind: unit.kind, text, via, reductions, ...(error ? { error } : {}) };
}

/** Every unit of a batch checked; a batch that cannot be split is one failing unit. */
export function checkBatch(sql: string): UnitResult[] {
  let units: Array<{ kind: 'statement' | 'condition'; text: string }>;
  try {
    units = splitBatch(sql);
  } catch (error) {
    return [
      { kind: 'statement', text: sql.slice(0, 80), via: 'split', reductions: [], error: (error as Error).message },
    ];
  }
  return units.map((u) => checkUnit(u));
}
