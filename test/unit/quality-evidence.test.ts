import { describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/domain/digest.js';
import {
  completionDocument,
  completionWitnessOf,
  preparedDocument,
  readCompletionDocument,
  readPreparedDocument,
} from '../../src/domain/quality/evidence.js';
import { originalProbes } from '../../src/domain/quality/probes.js';

const probes = originalProbes({
  rules: { rowCountMatchesReceipts: true, uniqueKeys: true, notNull: [], assertions: [] },
  keyColumns: ['event_id'],
  receiptsTotal: 10,
});
const prepared = preparedDocument({
  invocationId: 'inv-0123456789abcdefghjkmnpqrs',
  route: 'daily',
  targetId: 'events_ch.pub.events',
  candidateUuid: '0f1e2d3c-4b5a-8697-a8b9-cadbecfd0e1f',
  sealDigest: 'ab'.repeat(32),
  qualityBlock: { row_count_matches_receipts: true, unique_keys: true, capsule: 'v2' },
  plan: { probes, observeDeadlineSeconds: 240, reapBoundMs: 3000, retry: { kind: 'off' }, replayWindowDays: 14 },
  inventory: {
    columns: [{ name: 'event_id', type: 'UInt64', position: 1 }],
    engine: 'MergeTree',
    sortingKey: '',
    loadReceiptsDigest: 'cd'.repeat(32),
    totalRows: 10,
  },
  authorityBinding: {
    tableArn: 'arn:aws:dynamodb:ddblocal:000000000000:table/cutpoint',
    tableId: null,
    creationDateTime: '2026-01-01T00:00:00.000Z',
  },
  stagedResults: probes.map((p) => ({ name: p.name, result: 'PASSED' as const })),
  runs: { originalRunId: 'run-original', originalLoadId: 'load-original' },
});
const core = prepared.document.coreDigest;
const completion = completionDocument({
  invocationId: 'inv-0123456789abcdefghjkmnpqrs',
  coreDigest: core,
  candidateUuid: '0f1e2d3c-4b5a-8697-a8b9-cadbecfd0e1f',
  version: 6,
  at: '2026-01-02T03:05:00.000Z',
  runId: 'run-current',
  results: probes.map((p) => ({ name: p.name, result: 'PASSED' as const })),
});

/** Re-serialize a tampered document and return bytes + their own (matching) SHA: only the content is wrong. */
function tampered(doc: object, change: (d: Record<string, unknown>) => void) {
  const copy = JSON.parse(JSON.stringify(doc)) as Record<string, unknown>;
  change(copy);
  const bytes = JSON.stringify(copy);
  return { bytes, sha256: sha256Hex(bytes) };
}

describe('evidence documents', () => {
  it('are deterministic: the same facts give the same bytes and SHA-256', () => {
    expect(completionDocument({ ...completion.document }).sha256).toBe(completion.sha256);
    expect(prepared.sha256).toBe(sha256Hex(prepared.bytes));
  });

  it('read back verified', () => {
    expect(readPreparedDocument(prepared.bytes, prepared.sha256, core)).toEqual(prepared.document);
    expect(readCompletionDocument(completion.bytes, completion.sha256, core)).toEqual(completion.document);
  });

  it('SHA mismatch, unparsable bytes, wrong shape or non-recomputing digests are malformed (docs/rules.md#quality-evidence)', () => {
    const code = { code: 'quality.evidence_malformed' };
    expect(() => readPreparedDocument(prepared.bytes, 'ee'.repeat(32), core)).toThrow(expect.objectContaining(code));
    expect(() => readPreparedDocument('{', sha256Hex('{'), core)).toThrow(expect.objectContaining(code));
    const probe = tampered(
      prepared.document,
      (d) => ((d.plan as { probes: Array<{ expect: number }> }).probes[0]!.expect = 11),
    );
    expect(() => readPreparedDocument(probe.bytes, probe.sha256, core)).toThrow(expect.objectContaining(code));
    const optional = tampered(
      prepared.document,
      (d) => ((d.plan as { probes: Array<{ required: boolean }> }).probes[0]!.required = false),
    );
    expect(() => readPreparedDocument(optional.bytes, optional.sha256, core)).toThrow(expect.objectContaining(code));
    const extra = tampered(completion.document, (d) => (d.note = 'x'));
    expect(() => readCompletionDocument(extra.bytes, extra.sha256, core)).toThrow(expect.objectContaining(code));
    expect(() => readCompletionDocument(completion.bytes, completion.sha256, 'ff'.repeat(32))).toThrow(
      expect.objectContaining(code),
    );
  });

  it('a valid prepared.json of another core is core_digest_mismatch', () => {
    expect(() => readPreparedDocument(prepared.bytes, prepared.sha256, 'ff'.repeat(32))).toThrow(
      expect.objectContaining({ code: 'quality.core_digest_mismatch' }),
    );
  });

  it('classifies the completion witness for the continuity rule', () => {
    expect(completionWitnessOf({ status: 'found', bytes: completion.bytes }, completion.sha256, core)).toEqual({
      evidence: 'valid',
      version: 6,
    });
    expect(completionWitnessOf({ status: 'absent' }, completion.sha256, core)).toEqual({ evidence: 'missing' });
    expect(completionWitnessOf({ status: 'unreadable' }, completion.sha256, core)).toEqual({ evidence: 'unreadable' });
    expect(completionWitnessOf({ status: 'found', bytes: `${completion.bytes} ` }, completion.sha256, core)).toEqual({
      evidence: 'malformed',
    });
  });
});
