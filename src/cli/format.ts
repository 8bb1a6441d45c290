/**
 * `--format json|text`, which every command takes: the result as one JSON document
 * (default) or as readable text — `key: value` lines, nested objects indented, an array
 * of scalars comma-separated, an array of flat objects as a table, any other array as
 * `- ` items. Generic on purpose: text is for reading, JSON for scripts.
 */

export const OUTPUT_FORMATS = ['json', 'text'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

export function renderResult(result: unknown, format: OutputFormat): string {
  return format === 'json' ? JSON.stringify(result, null, 2) : renderText(result, '');
}

type Scalar = string | number | boolean | null | undefined;

function isScalar(value: unknown): value is Scalar {
  return value === null || value === undefined || typeof value !== 'object';
}

function scalarText(value: Scalar | readonly Scalar[]): string {
  if (Array.isArray(value)) return value.length ? value.map((v) => scalarText(v)).join(', ') : '-';
  if (value === null || value === undefined) return '-';
  return typeof value === 'string' ? value.replace(/[\r\n\t]/g, ' ') : String(value);
}

/** A table cell: a scalar, or an array of scalars (shown comma-separated). */
function isCell(value: unknown): boolean {
  return isScalar(value) || (Array.isArray(value) && value.every(isScalar));
}

export function renderText(value: unknown, indent: string): string {
  if (isScalar(value)) return `${indent}${scalarText(value)}`;
  if (Array.isArray(value)) return renderArray(value, indent);
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length === 0) return `${indent}(empty)`;
  return entries
    .map(([key, v]) => {
      if (isScalar(v)) return `${indent}${key}: ${scalarText(v)}`;
      if (Array.isArray(v) && v.length === 0) return `${indent}${key}: (none)`;
      if (isCell(v)) return `${indent}${key}: ${scalarText(v as Scalar[])}`;
      return `${indent}${key}:\n${renderText(v, `${indent}  `)}`;
    })
    .join('\n');
}

function renderArray(items: readonly unknown[], indent: string): string {
  if (items.length === 0) return `${indent}(none)`;
  if (items.every(isScalar)) return items.map((i) => `${indent}- ${scalarText(i)}`).join('\n');
  const flat = items.every((i) => !isScalar(i) && !Array.isArray(i) && Object.values(i as object).every(isCell));
  if (flat) return table(items as Record<string, Scalar | Scalar[]>[], indent);
  return items.map((i) => `${indent}-\n${renderText(i, `${indent}  `)}`).join('\n');
}

/** Columns: every key, in first-seen order; each as wide as its widest cell. */
function table(rows: readonly Record<string, Scalar | Scalar[]>[], indent: string): string {
  const columns: string[] = [];
  for (const row of rows) for (const key of Object.keys(row)) if (!columns.includes(key)) columns.push(key);
  const cells = rows.map((row) => columns.map((c) => scalarText(row[c])));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((r) => (r[i] as string).length)));
  const line = (values: readonly string[]) =>
    `${indent}${values.map((v, i) => (i === values.length - 1 ? v : v.padEnd(widths[i] as number))).join('  ')}`;
  return [line(columns.map((c) => c.toUpperCase())), ...cells.map(line)].join('\n');
}
