import { describe, expect, it } from 'vitest';
import {
  interpretExchangeObservation,
  type ExchangeObservation,
  type ExchangeObservationInput,
  type ObservedTable,
} from '../../src/domain/publication/exchange-observation.js';

const C = '1f0e8d6c-5b4a-8392-a1b0-c9d8e7f6a5b4';
const P = '7a6b5c4d-3e2f-4a1b-9c8d-7e6f5a4b3c2d';
const Q = '0b1c2d3e-4f5a-4b6c-8d7e-8f9a0b1c2d3e';
const NIL = '00000000-0000-0000-0000-000000000000';
const MARKER =
  '{"invocationId":"inv-aaaaaaaaaaaaaaaaaaaaaaaaaa","kind":"cutpoint.clickhouse-candidate.v1","owner":"o"}';
const OTHER_MARKER =
  '{"invocationId":"inv-bbbbbbbbbbbbbbbbbbbbbbbbbb","kind":"cutpoint.clickhouse-candidate.v1","owner":"o"}';
const PREDECESSOR_COMMENT = 'daily events';

const names = {
  database: 'dwh',
  target: 'events_daily',
  stage: 'cutpoint_stg_aaaaaaaaaaaaaaaaaaaa',
  candidate: 'cutpoint_stg_aaaaaaaaaaaaaaaaaaaa_c',
  tombstone: 'cutpoint_stg_aaaaaaaaaaaaaaaaaaaa_x',
};

type Where = 'target' | 'candidate' | 'tombstone';

function row(where: Where, uuid: string, comment: string): ObservedTable {
  return { database: names.database, name: names[where], uuid, comment };
}

const ours = (where: Where, uuid = C) => row(where, uuid, MARKER);
const pred = (where: Where, uuid = P) => row(where, uuid, PREDECESSOR_COMMENT);

function observe(rows: ObservedTable[], overrides: Partial<ExchangeObservationInput> = {}): ExchangeObservation {
  return interpretExchangeObservation({
    names,
    candidateUuid: C,
    predecessorUuid: P,
    marker: MARKER,
    succeeded: true,
    rows,
    ...overrides,
  });
}

const proven = (predecessorName: string): ExchangeObservation => ({
  outcome: 'COMMIT_PROVEN',
  candidateUuid: C,
  predecessorUuid: P,
  predecessorName,
});
const contradicted = (why: string): ExchangeObservation => ({ outcome: 'CONTRADICTED', why }) as ExchangeObservation;

// U8 is a governance acceptance case (docs/testing.md#governance-acceptance).
describe('interpretExchangeObservation (U8, docs/rules.md#exchange-observation)', () => {
  const rows: Array<[string, ObservedTable[], ExchangeObservation]> = [
    // Rule 4: the EXCHANGE applied.
    ['target C with our marker, candidate name P', [ours('target'), pred('candidate')], proven(names.candidate)],
    // Rule 5: the late EXCHANGE landed before the fence rename; the rename then moved P.
    ['target C with our marker, tombstone P', [ours('target'), pred('tombstone')], proven(names.tombstone)],
    [
      'UUIDs compare case-insensitively',
      [ours('target', C.toUpperCase()), pred('candidate', P.toUpperCase())],
      proven(names.candidate),
    ],
    ['rows in any order', [pred('candidate'), ours('target')], proven(names.candidate)],
    // Not applied (yet): never proof that it will not land.
    ['target P, candidate name C', [pred('target'), ours('candidate')], { outcome: 'NOT_APPLIED_YET' }],
    // Fenced: the candidate name is gone, a late EXCHANGE fails UNKNOWN_TABLE.
    ['target P, tombstone C', [pred('target'), ours('tombstone')], { outcome: 'NOT_PUBLISHED_FENCED' }],
    // Contradictions.
    [
      'target C with another comment',
      [row('target', C, OTHER_MARKER), pred('candidate')],
      contradicted('marker_mismatch'),
    ],
    ['target C with an empty comment', [row('target', C, ''), pred('candidate')], contradicted('marker_mismatch')],
    [
      'candidate name C with another comment',
      [pred('target'), row('candidate', C, OTHER_MARKER)],
      contradicted('marker_mismatch'),
    ],
    [
      'tombstone C with another comment',
      [pred('target'), row('tombstone', C, PREDECESSOR_COMMENT)],
      contradicted('marker_mismatch'),
    ],
    ['a third UUID under the target', [pred('target', Q), ours('candidate')], contradicted('third_uuid')],
    ['a third UUID under the candidate name', [ours('target'), pred('candidate', Q)], contradicted('third_uuid')],
    [
      'a third UUID under the tombstone name',
      [pred('target'), ours('candidate'), pred('tombstone', Q)],
      contradicted('third_uuid'),
    ],
    [
      'a nil UUID (non-Atomic table) under the target',
      [pred('target', NIL), ours('candidate')],
      contradicted('third_uuid'),
    ],
    ['a UUID that is no UUID', [pred('target', 'not-a-uuid'), ours('candidate')], contradicted('third_uuid')],
    ['C in two places', [ours('target'), ours('candidate')], contradicted('uuid_in_two_places')],
    [
      'C under candidate and tombstone names',
      [pred('target'), ours('candidate'), ours('tombstone')],
      contradicted('uuid_in_two_places'),
    ],
    ['P in two places', [pred('target'), pred('candidate')], contradicted('uuid_in_two_places')],
    ['target row missing, C at the candidate name', [ours('candidate')], contradicted('target_missing')],
    ['target row missing, P at the candidate name', [pred('candidate')], contradicted('target_missing')],
    ['no rows at all', [], contradicted('target_missing')],
    ['target C, predecessor row missing', [ours('target')], contradicted('predecessor_missing')],
    ['target P, candidate row missing', [pred('target')], contradicted('candidate_missing')],
    [
      'a row of another database',
      [pred('target'), { ...ours('candidate'), database: 'other' }],
      contradicted('unexpected_row'),
    ],
    [
      'a row of another name',
      [pred('target'), ours('candidate'), { ...pred('candidate', Q), name: 'events_daily_old' }],
      contradicted('unexpected_row'),
    ],
    ['the same name twice', [pred('target'), ours('candidate'), ours('candidate')], contradicted('unexpected_row')],
  ];

  it.each(rows)('%s', (_label, observed, expected) => {
    expect(observe(observed)).toEqual(expected);
  });

  it('a failed read is UNOBSERVABLE whatever rows it carries', () => {
    expect(observe([], { succeeded: false })).toEqual({ outcome: 'UNOBSERVABLE' });
    expect(observe([ours('target'), pred('candidate')], { succeeded: false })).toEqual({ outcome: 'UNOBSERVABLE' });
  });

  it('expected UUIDs given in upper case compare like lower case', () => {
    expect(
      observe([ours('target'), pred('candidate')], {
        candidateUuid: C.toUpperCase(),
        predecessorUuid: P.toUpperCase(),
      }),
    ).toEqual(proven(names.candidate));
  });

  it('refuses inputs that cannot identify the tables: malformed, nil or equal UUIDs', () => {
    const refusal = { name: 'Cutpoint.ValidationError', code: 'publication.observation_input_invalid' };
    expect(() => observe([], { candidateUuid: 'nope' })).toThrow(expect.objectContaining(refusal));
    expect(() => observe([], { predecessorUuid: NIL })).toThrow(expect.objectContaining(refusal));
    expect(() => observe([], { predecessorUuid: C.toUpperCase() })).toThrow(expect.objectContaining(refusal));
    expect(() => observe([], { succeeded: false, candidateUuid: '' })).toThrow(expect.objectContaining(refusal));
  });
});
