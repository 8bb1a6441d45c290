/**
 * The one printer of generated ASL (statemachines/<flow>.asl.json): two-space indented JSON,
 * keys in the order the spec builds them, an array of strings or numbers on one line when
 * the line stays within 120 characters, otherwise one element per line. Deterministic, so
 * the drift test can compare the committed files byte for byte.
 */
const WIDTH = 120;

export function printAsl(value: unknown): string {
  return `${print(value, '', 0)}\n`;
}

function print(value: unknown, indent: string, prefixLength: number): string {
  if (Array.isArray(value)) return printArray(value, indent, prefixLength);
  if (value !== null && typeof value === 'object') return printObject(value as Record<string, unknown>, indent);
  return JSON.stringify(value);
}

function printObject(object: Record<string, unknown>, indent: string): string {
  const entries = Object.entries(object).filter(([, v]) => v !== undefined);
  if (entries.length === 0) return '{}';
  const inner = `${indent}  `;
  const lines = entries.map(([key, v]) => {
    const head = `${inner}${JSON.stringify(key)}: `;
    return head + print(v, inner, head.length);
  });
  return `{\n${lines.join(',\n')}\n${indent}}`;
}

function printArray(array: unknown[], indent: string, prefixLength: number): string {
  if (array.length === 0) return '[]';
  const scalars = array.every((v) => v === null || typeof v !== 'object');
  if (scalars) {
    const flat = `[${array.map((v) => JSON.stringify(v)).join(', ')}]`;
    // +1 for a following comma.
    if (prefixLength + flat.length + 1 <= WIDTH) return flat;
  }
  const inner = `${indent}  `;
  return `[\n${array.map((v) => inner + print(v, inner, inner.length)).join(',\n')}\n${indent}]`;
}
