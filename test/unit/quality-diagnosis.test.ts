import { describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/domain/digest.js';
import { checkContinuity } from '../../src/domain/quality/continuity.js';
import { COMPARISON_NAMES, diagnosisProjection, type ComparisonInputs } from '../../src/domain/quality/diagnosis.js';
import { generationDigest } from '../../src/domain/quality/projection.js';
import { originalProbes } from '../../src/domain/quality/probes.js';
import { CANDIDATE_UUID } from './quality-fixtures.js';

const h = (c: string) => c.repeat(64);
const same = (d: string) => ({ sealed: d, observed: d });
const comparisons: ComparisonInputs = {
  policy: same(h('1')),
  admission: same(h('2')),
  inventory: { sealed: h('3'), observed: h('4') },
  generation: same(sha256Hex(CANDIDATE_UUID)),
  immutable_core: same(h('c')),
  seal: { sealed: h('5'), observed: null },
  authority_binding: same(h('6')),
};
const probes = originalProbes({
  rules: { rowCountMatchesReceipts: false, uniqueKeys: true, notNull: ['event_id'], assertions: [] },
  keyColumns: ['event_id'],
  receiptsTotal: 0,
});

describe('diagnose projection (docs/rules.md#quality-commands, N22)', () => {
  const d = diagnosisProjection({
    invocationId: 'inv-0123456789abcdefghjkmnpqrs',
    comparisons,
    continuity: checkContinuity({
      completion: { evidence: 'valid', version: 9 },
      observedVersion: 7,
      capsuleState: 'COMPLETE',
      itemCompletion: { version: 9, evidenceRecorded: true },
    }),
    probes,
    dataset: 'events_ch.pub.events',
    lastErrorCode: 'quality.authority_version_rollback',
  });

  it('golden', () => {
    expect(JSON.stringify(d)).toBe(
      '{"acceptance":[{"columns":["event_id"],"dataset":"events_ch.pub.events","kind":"unique_keys","probe":"unique_keys"},{"columns":["event_id"],"dataset":"events_ch.pub.events","kind":"not_null","probe":"not_null:event_id"}],' +
        '"authority":{"completion_version":9,"continuity":"rollback","observed_version":7},' +
        '"comparisons":[{"match":true,"name":"policy","observed":"sha256:1111111111111111","sealed":"sha256:1111111111111111"},{"match":true,"name":"admission","observed":"sha256:2222222222222222","sealed":"sha256:2222222222222222"},{"match":false,"name":"inventory","observed":"sha256:4444444444444444","sealed":"sha256:3333333333333333"},' +
        `{"match":true,"name":"generation","observed":"${generationDigest(CANDIDATE_UUID)}","sealed":"${generationDigest(CANDIDATE_UUID)}"},{"match":true,"name":"immutable_core","observed":"sha256:cccccccccccccccc","sealed":"sha256:cccccccccccccccc"},` +
        '{"match":"unknown","name":"seal","observed":null,"sealed":"sha256:5555555555555555"},{"match":true,"name":"authority_binding","observed":"sha256:6666666666666666","sealed":"sha256:6666666666666666"}],' +
        '"invocation_id":"inv-0123456789abcdefghjkmnpqrs","kind":"cutpoint.quality-diagnosis.v1","last_error_code":"quality.authority_version_rollback","schema_version":1}',
    );
  });

  it('every comparison is listed; an observation the caller could not make is unknown, never a match; no UUID', () => {
    expect(d.comparisons.map((c) => c.name)).toEqual([...COMPARISON_NAMES]);
    expect(d.comparisons.find((c) => c.name === 'seal')?.match).toBe('unknown');
    expect(JSON.stringify(d)).not.toContain(CANDIDATE_UUID);
  });

  it('unknown continuity when nothing could be read', () => {
    const none = diagnosisProjection({
      invocationId: 'inv-x',
      comparisons,
      continuity: null,
      probes,
      dataset: 'x',
      lastErrorCode: null,
    });
    expect(none.authority).toEqual({ completion_version: null, continuity: 'unknown', observed_version: null });
  });
});
