import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeRow } from '../../src/delivery/chunk-codec.js';
import { LineProof } from '../../src/domain/delivery/line-proof.js';
import type { TargetRow } from '../../src/domain/delivery/target-types.js';

/**
 * A source line the proof accepts is byte for byte the line the encoder spells for the
 * row it parses to, whatever spelling the source chose; and the plain spelling of an
 * escape-free row of strings, nulls and booleans is accepted (else the proof saves nothing).
 */
const columns = ['t', 'k', 'v'];
const proof = new LineProof(columns);

const scalar = fc.oneof(
  fc.string({ unit: 'binary' }),
  fc.constantFrom('', 'a/b', 'x"y', 'é€𝄞', '\u2028', '\n', '\\'),
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);
const row = fc.tuple(scalar, scalar, scalar).map(([t, k, v]) => ({ t, k, v }) as TargetRow);

/** Other spellings of the same object: whitespace, escapes a server may use, key order, a repeated key. */
const respell = (r: TargetRow, how: number): string => {
  const plain = JSON.stringify(r);
  switch (how) {
    case 0:
      return plain;
    case 1:
      return JSON.stringify(r, null, 1).replaceAll('\n', '');
    case 2:
      return plain.replaceAll('/', '\\/');
    case 3:
      return plain.replace(/[^\x20-\x7e]/gu, (c) => `\\u${(c.codePointAt(0) as number).toString(16).padStart(4, '0')}`);
    case 4:
      return JSON.stringify({ k: r.k, t: r.t, v: r.v });
    case 5:
      return `{"t":${JSON.stringify(r.v)},${plain.slice(1)}`;
    default:
      return `{ ${plain.slice(1)}`;
  }
};

describe('LineProof', () => {
  it('accepts a line only when it is the canonical line of the row it parses to', () => {
    fc.assert(
      fc.property(row, fc.integer({ min: 0, max: 6 }), (r, how) => {
        const line = respell(r, how);
        const parsed = JSON.parse(line) as TargetRow;
        const inOrder = Object.keys(parsed).join() === columns.join();
        if (inOrder && proof.accepts(line, parsed)) expect(`${line}\n`).toBe(encodeRow(parsed, columns));
      }),
      { numRuns: 2000 },
    );
  });

  it('accepts the plain spelling of an escape-free row of strings, nulls and booleans', () => {
    const r: TargetRow = { t: '2026-01-01 00:00:00.000', k: null, v: true };
    const line = JSON.stringify(r);
    expect(proof.accepts(line, JSON.parse(line) as TargetRow)).toBe(true);
    expect(proof.accepts(JSON.stringify({ ...r, v: false }), { ...r, v: false })).toBe(true);
  });

  it('refuses numbers, escapes, whitespace, a repeated key, and integer column names', () => {
    const take = (line: string): boolean => proof.accepts(line, JSON.parse(line) as TargetRow);
    expect(take('{"t":"a","k":100,"v":null}')).toBe(false);
    expect(take('{"t":"a\\/b","k":"x","v":null}')).toBe(false);
    expect(take('{"t":"a","k":"x", "v":null}')).toBe(false);
    expect(take('{"t":"zz","t":"a","k":"x","v":null}')).toBe(false);
    // JSON.parse lists "1" first whatever the text says: keys in column order prove nothing.
    const numeric = new LineProof(['1', 'b']);
    expect(numeric.accepts('{"b":"x","1":"y"}', JSON.parse('{"b":"x","1":"y"}') as TargetRow)).toBe(false);
  });
});
