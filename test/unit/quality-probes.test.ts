import { describe, expect, it } from 'vitest';
import {
  bindProbe,
  evaluateProbe,
  evaluateProbes,
  originalProbes,
  type OriginalProbe,
} from '../../src/domain/quality/probes.js';
import type { QualityRules } from '../../src/domain/delivery/manifest-types.js';

const NONE: QualityRules = { rowCountMatchesReceipts: false, uniqueKeys: false, notNull: [], assertions: [] };

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    return (error as { code?: string }).code ?? 'no code';
  }
  return 'no error';
}

describe('originalProbes', () => {
  it('builds one required probe per rule, in rule order, with the sealed receipts total', () => {
    const probes = originalProbes({
      rules: {
        rowCountMatchesReceipts: true,
        uniqueKeys: true,
        notNull: ['a', 'b'],
        assertions: [{ name: 'x', sql: 'SELECT sum(v) FROM {relation}', expect: 7 }],
      },
      keyColumns: ['id'],
      receiptsTotal: 42,
    });
    expect(probes).toEqual([
      {
        name: 'row_count_matches_receipts',
        kind: 'row_count',
        sql: 'SELECT count() FROM {relation}',
        expect: 42,
        required: true,
        columns: [],
      },
      {
        name: 'unique_keys',
        kind: 'unique_keys',
        sql: 'SELECT count() FROM (SELECT 1 FROM {relation} GROUP BY `id` HAVING count() > 1)',
        expect: 0,
        required: true,
        columns: ['id'],
      },
      {
        name: 'not_null:a',
        kind: 'not_null',
        sql: 'SELECT countIf(isNull(`a`)) FROM {relation}',
        expect: 0,
        required: true,
        columns: ['a'],
      },
      {
        name: 'not_null:b',
        kind: 'not_null',
        sql: 'SELECT countIf(isNull(`b`)) FROM {relation}',
        expect: 0,
        required: true,
        columns: ['b'],
      },
      {
        name: 'assertion:x',
        kind: 'assertion',
        sql: 'SELECT sum(v) FROM {relation}',
        expect: 7,
        required: true,
        columns: [],
      },
    ]);
  });

  it('row_count expects the sealed total: the only number it takes is receiptsTotal (N3)', () => {
    const at = (n: number) =>
      originalProbes({ rules: { ...NONE, rowCountMatchesReceipts: true }, keyColumns: [], receiptsTotal: n })[0]!
        .expect;
    expect(at(0)).toBe(0);
    expect(at(123_456_789)).toBe(123_456_789);
  });

  it('refuses {staging}, a second placeholder, or no placeholder in an assertion', () => {
    const build = (sql: string) => () =>
      originalProbes({
        rules: { ...NONE, assertions: [{ name: 'a', sql, expect: 0 }] },
        keyColumns: [],
        receiptsTotal: 0,
      });
    expect(codeOf(build('SELECT count() FROM {staging}'))).toBe('quality.placeholder_invalid');
    expect(codeOf(build('SELECT count() FROM {relation} JOIN {staging} USING id'))).toBe('quality.placeholder_invalid');
    expect(codeOf(build('SELECT 0'))).toBe('quality.placeholder_invalid');
  });

  it('refuses identifiers that cannot be quoted safely, and zero probes (quality cannot be off)', () => {
    expect(
      codeOf(() => originalProbes({ rules: { ...NONE, notNull: ['a`b'] }, keyColumns: [], receiptsTotal: 0 })),
    ).toBe('delivery.invalid_identifier');
    expect(
      codeOf(() => originalProbes({ rules: { ...NONE, uniqueKeys: true }, keyColumns: ['x y'], receiptsTotal: 0 })),
    ).toBe('delivery.invalid_identifier');
    expect(
      codeOf(() => originalProbes({ rules: { ...NONE, uniqueKeys: true }, keyColumns: [], receiptsTotal: 0 })),
    ).toBe('quality.probe_invalid');
    expect(codeOf(() => originalProbes({ rules: NONE, keyColumns: ['id'], receiptsTotal: 0 }))).toBe(
      'quality.required_cannot_degrade',
    );
    expect(
      codeOf(() =>
        originalProbes({ rules: { ...NONE, rowCountMatchesReceipts: true }, keyColumns: [], receiptsTotal: -1 }),
      ),
    ).toBe('quality.probe_invalid');
  });
});

describe('bindProbe', () => {
  it('binds every {relation} to the exact backtick-quoted table', () => {
    expect(
      bindProbe('SELECT count() FROM {relation} WHERE x IN (SELECT x FROM {relation})', {
        database: 'pub',
        table: 'cutpoint_stg_abc_c',
      }),
    ).toBe('SELECT count() FROM `pub`.`cutpoint_stg_abc_c` WHERE x IN (SELECT x FROM `pub`.`cutpoint_stg_abc_c`)');
  });

  it('refuses unsafe names and SQL without the placeholder', () => {
    expect(
      codeOf(() => bindProbe('SELECT count() FROM {relation}', { database: 'pub', table: 'x`; DROP TABLE y' })),
    ).toBe('delivery.invalid_identifier');
    expect(codeOf(() => bindProbe('SELECT 1', { database: 'pub', table: 't' }))).toBe('quality.placeholder_invalid');
  });
});

describe('evaluateProbe (N2, N9)', () => {
  const zero = { expect: 0 };
  const cases: Array<[unknown, { expect: number }, string]> = [
    [0, zero, 'PASSED'],
    ['0', zero, 'PASSED'],
    [1, zero, 'FAILED'],
    ['1', zero, 'FAILED'],
    ['18446744073709551615', zero, 'FAILED'],
    ['9007199254740993', { expect: 9007199254740992 }, 'FAILED'],
    ['9007199254740992', { expect: 9007199254740992 }, 'PASSED'],
    ['0.0', zero, 'PASSED'],
    ['0.5', zero, 'FAILED'],
    [null, zero, 'MALFORMED'],
    [undefined, zero, 'MALFORMED'],
    ['', zero, 'MALFORMED'],
    [' 0', zero, 'MALFORMED'],
    ['abc', zero, 'MALFORMED'],
    ['NaN', zero, 'MALFORMED'],
    [Number.NaN, zero, 'MALFORMED'],
    [Number.POSITIVE_INFINITY, zero, 'MALFORMED'],
    ['1e999', zero, 'MALFORMED'],
    [true, zero, 'MALFORMED'],
    [false, zero, 'MALFORMED'],
    [[0], zero, 'MALFORMED'],
    [{ value: 0 }, zero, 'MALFORMED'],
  ];
  it.each(cases)('observed %j against %j → %s', (observed, probe, result) => {
    expect(evaluateProbe(probe, observed)).toBe(result);
  });
  it('a bigint compares exactly', () => {
    expect(evaluateProbe({ expect: 10 }, 10n)).toBe('PASSED');
    expect(evaluateProbe({ expect: 10 }, 11n)).toBe('FAILED');
  });
});

describe('evaluateProbes', () => {
  const probes: OriginalProbe[] = originalProbes({
    rules: { ...NONE, rowCountMatchesReceipts: true, notNull: ['a'] },
    keyColumns: [],
    receiptsTotal: 5,
  });

  it('COMPLETE only when every probe passes', () => {
    expect(evaluateProbes(probes, { row_count_matches_receipts: '5', 'not_null:a': '0' })).toEqual({
      outcome: 'COMPLETE',
      results: [
        { name: 'row_count_matches_receipts', result: 'PASSED' },
        { name: 'not_null:a', result: 'PASSED' },
      ],
      failed: [],
    });
  });

  it('a failed, malformed or absent result is FAILED, never COMPLETE', () => {
    expect(evaluateProbes(probes, { row_count_matches_receipts: '4', 'not_null:a': '0' }).failed).toEqual([
      'row_count_matches_receipts',
    ]);
    expect(evaluateProbes(probes, { row_count_matches_receipts: '5', 'not_null:a': null })).toMatchObject({
      outcome: 'FAILED',
      failed: ['not_null:a'],
    });
    expect(evaluateProbes(probes, { row_count_matches_receipts: '5' })).toMatchObject({
      outcome: 'FAILED',
      failed: ['not_null:a'],
    });
    expect(evaluateProbes(probes, {})).toMatchObject({
      outcome: 'FAILED',
      failed: ['row_count_matches_receipts', 'not_null:a'],
    });
  });

  it('zero probes are never a pass', () => {
    expect(codeOf(() => evaluateProbes([], {}))).toBe('quality.required_cannot_degrade');
  });
});
