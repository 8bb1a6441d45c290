import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CORE_KIND, immutableCoreDigest, sealCore, type CoreInputs } from '../../src/domain/quality/core.js';
import { originalProbes } from '../../src/domain/quality/probes.js';
import type { CutpointError } from '../../src/domain/errors.js';

const probes = originalProbes({
  rules: {
    rowCountMatchesReceipts: true,
    uniqueKeys: true,
    notNull: ['event_id'],
    assertions: [{ name: 'no_future', sql: 'SELECT count() FROM {relation} WHERE ts > now()', expect: 0 }],
  },
  keyColumns: ['event_id', 'ts'],
  receiptsTotal: 1000,
});

const INPUTS: CoreInputs = {
  invocationId: 'inv-0123456789abcdefghjkmnpqrs',
  route: 'daily',
  targetId: 'events_ch.pub.events',
  candidateUuid: '0f1e2d3c-4b5a-8697-a8b9-cadbecfd0e1f',
  sealDigest: 'ab'.repeat(32),
  qualityBlock: { row_count_matches_receipts: true, unique_keys: true, not_null: ['event_id'], capsule: 'v2' },
  plan: { probes, observeDeadlineSeconds: 240, reapBoundMs: 3000, retry: { kind: 'off' }, replayWindowDays: 14 },
  inventory: {
    columns: [
      { name: 'ts', type: 'DateTime64(3)', position: 2 },
      { name: 'event_id', type: 'UInt64', position: 1 },
    ],
    engine: 'MergeTree',
    sortingKey: 'event_id',
    loadReceiptsDigest: 'cd'.repeat(32),
    totalRows: 1000,
  },
  authorityBinding: {
    tableArn: 'arn:aws:dynamodb:ddblocal:000000000000:table/cutpoint',
    tableId: null,
    creationDateTime: '2026-01-01T00:00:00.000Z',
  },
};

const GOLDEN = {
  coreDigest: 'e0ee45ffe89f04f2a5036c521684db2da64ed07d55c2ea71dd98c7221f413cb0',
  digests: {
    policy: '605db441032764375897566c2525a590479326b0a442ef653049c83d2bbd58b9',
    admission: '832998dec70be31b8e94fc0b38cb55c45c54a98f7faba9a8ba1d4a3f20692e6d',
    inventory: '76b2253347221037eed911fe695263da7e07d4934cf1a25210fe32bbc103feab',
    probes: '08bdf9b9437ce119091bac9314213e6904bbd841ad64302db5ff51d12ae431cf',
    authorityBinding: '4d61bb5c5ca627e08c19e6b8523c82686bc692910a3ea9c804a89a9665b6fa9d',
  },
};

// U3 is a governance acceptance case (docs/testing.md#governance-acceptance).
describe('immutable core digest (U3)', () => {
  it('matches the golden vector', () => {
    expect(sealCore(INPUTS)).toEqual(GOLDEN);
  });

  it('is SHA-256 of the documented canonical JSON (independent of canonicalDigest)', () => {
    const d = GOLDEN.digests;
    const literal =
      `{"admissionDigest":"${d.admission}","authorityBindingDigest":"${d.authorityBinding}","capsuleSchema":2,` +
      `"generation":{"candidateUuid":"0f1e2d3c-4b5a-8697-a8b9-cadbecfd0e1f"},"inventoryDigest":"${d.inventory}",` +
      `"invocationId":"inv-0123456789abcdefghjkmnpqrs","kind":"${CORE_KIND}","policyDigest":"${d.policy}",` +
      `"probesDigest":"${d.probes}","route":"daily","sealDigest":"${'ab'.repeat(32)}","targetId":"events_ch.pub.events"}`;
    expect(createHash('sha256').update(literal).digest('hex')).toBe(GOLDEN.coreDigest);
    expect(CORE_KIND).toBe('cutpoint.quality-core.v2');
  });

  it('inventory column order as listed does not matter (positions do)', () => {
    const reversed = {
      ...INPUTS,
      inventory: { ...INPUTS.inventory, columns: [...INPUTS.inventory.columns].reverse() },
    };
    expect(sealCore(reversed).coreDigest).toBe(GOLDEN.coreDigest);
  });

  const changes: Array<[string, (i: CoreInputs) => CoreInputs]> = [
    ['invocation', (i) => ({ ...i, invocationId: 'inv-0123456789abcdefghjkmnpqrt' })],
    ['route', (i) => ({ ...i, route: 'hourly' })],
    ['target', (i) => ({ ...i, targetId: 'events_ch.pub.events2' })],
    ['generation', (i) => ({ ...i, candidateUuid: '0f1e2d3c-4b5a-8697-a8b9-cadbecfd0e10' })],
    ['seal', (i) => ({ ...i, sealDigest: 'ac'.repeat(32) })],
    ['policy', (i) => ({ ...i, qualityBlock: { ...(i.qualityBlock as object), unique_keys: false } })],
    [
      'probe expectation',
      (i) => ({
        ...i,
        plan: { ...i.plan, probes: i.plan.probes.map((p, n) => (n === 0 ? { ...p, expect: 999 } : p)) },
      }),
    ],
    [
      'probe sql',
      (i) => ({
        ...i,
        plan: { ...i.plan, probes: i.plan.probes.map((p, n) => (n === 3 ? { ...p, sql: `${p.sql} ` } : p)) },
      }),
    ],
    ['probe dropped', (i) => ({ ...i, plan: { ...i.plan, probes: i.plan.probes.slice(1) } })],
    ['deadline', (i) => ({ ...i, plan: { ...i.plan, observeDeadlineSeconds: 241 } })],
    ['reap bound', (i) => ({ ...i, plan: { ...i.plan, reapBoundMs: 3001 } })],
    [
      'retry policy',
      (i) => ({ ...i, plan: { ...i.plan, retry: { kind: 'keeper_no_node', maxAttempts: 2, maxElapsedMs: 5000 } } }),
    ],
    ['replay window', (i) => ({ ...i, plan: { ...i.plan, replayWindowDays: 15 } })],
    [
      'column type',
      (i) => ({
        ...i,
        inventory: {
          ...i.inventory,
          columns: [{ name: 'event_id', type: 'Int64', position: 1 }, i.inventory.columns[0]!],
        },
      }),
    ],
    [
      'column position',
      (i) => ({
        ...i,
        inventory: {
          ...i.inventory,
          columns: [
            { ...i.inventory.columns[0]!, position: 1 },
            { ...i.inventory.columns[1]!, position: 2 },
          ],
        },
      }),
    ],
    ['engine', (i) => ({ ...i, inventory: { ...i.inventory, engine: 'ReplacingMergeTree' } })],
    ['sorting key', (i) => ({ ...i, inventory: { ...i.inventory, sortingKey: 'ts' } })],
    ['load receipts', (i) => ({ ...i, inventory: { ...i.inventory, loadReceiptsDigest: 'ce'.repeat(32) } })],
    ['total rows', (i) => ({ ...i, inventory: { ...i.inventory, totalRows: 1001 } })],
    [
      'table arn',
      (i) => ({ ...i, authorityBinding: { ...i.authorityBinding, tableArn: `${i.authorityBinding.tableArn}2` } }),
    ],
    ['table id', (i) => ({ ...i, authorityBinding: { ...i.authorityBinding, tableId: 'a1b2' } })],
    [
      'creation time',
      (i) => ({ ...i, authorityBinding: { ...i.authorityBinding, creationDateTime: '2026-01-01T00:00:01.000Z' } }),
    ],
  ];
  it.each(changes)('changing the %s changes the core digest', (_label, change) => {
    expect(sealCore(change(INPUTS)).coreDigest).not.toBe(GOLDEN.coreDigest);
  });

  it('immutableCoreDigest from stored component digests equals the sealed one (replay recomputation)', () => {
    expect(immutableCoreDigest(INPUTS, GOLDEN.digests)).toBe(GOLDEN.coreDigest);
  });

  const refusals: Array<[string, (i: CoreInputs) => CoreInputs, string]> = [
    [
      'an optional probe',
      (i) => ({ ...i, plan: { ...i.plan, probes: [{ ...i.plan.probes[0]!, required: false as unknown as true }] } }),
      'quality.required_cannot_degrade',
    ],
    ['no probe', (i) => ({ ...i, plan: { ...i.plan, probes: [] } }), 'quality.required_cannot_degrade'],
    [
      'deadline above 600 s',
      (i) => ({ ...i, plan: { ...i.plan, observeDeadlineSeconds: 601 } }),
      'quality.admission_invalid',
    ],
    ['window above 35 days', (i) => ({ ...i, plan: { ...i.plan, replayWindowDays: 36 } }), 'quality.admission_invalid'],
    [
      'retry of 4 attempts',
      (i) => ({ ...i, plan: { ...i.plan, retry: { kind: 'keeper_no_node', maxAttempts: 4, maxElapsedMs: 1000 } } }),
      'quality.admission_invalid',
    ],
    [
      'retry beyond 10 s',
      (i) => ({ ...i, plan: { ...i.plan, retry: { kind: 'keeper_no_node', maxAttempts: 1, maxElapsedMs: 10_001 } } }),
      'quality.admission_invalid',
    ],
    [
      'a position gap',
      (i) => ({
        ...i,
        inventory: { ...i.inventory, columns: [{ ...i.inventory.columns[0]!, position: 3 }, i.inventory.columns[1]!] },
      }),
      'quality.admission_invalid',
    ],
  ];
  it.each(refusals)('refuses %s', (_label, change, code) => {
    expect(() => sealCore(change(INPUTS))).toThrow(expect.objectContaining({ code }) as CutpointError);
  });
});
