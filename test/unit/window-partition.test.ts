import { describe, expect, it } from 'vitest';
import { factProblems } from '../../src/domain/delivery/journal-invariants.js';
import { missingProof, proofsOf } from '../../src/domain/delivery/journal-proofs.js';
import { parseOwnerMarker } from '../../src/domain/delivery/target-rules.js';
import {
  decideSwap,
  parseRangeBound,
  publishedInvocationOf,
  publishedMarker,
  windowPartitionNameOf,
  type PartitionFacts,
} from '../../src/domain/delivery/window-partition.js';
import { parseFacts, validatePatch } from '../../src/delivery/journal/facts.js';

const DAY = { start: new Date('2026-11-01T00:00:00Z'), end: new Date('2026-11-02T00:00:00Z') };

describe('window partitions (pure rules of publication by partition swap)', () => {
  it('the stable partition name: target table and UTC bounds, milliseconds only when present, cut with a digest to 63 characters', () => {
    expect(windowPartitionNameOf({ schema: 'dwh', table: 'events' }, DAY)).toBe(
      'events_p20261101000000_20261102000000',
    );
    expect(
      windowPartitionNameOf(
        { schema: 'dwh', table: 'events' },
        { start: new Date('2026-11-01T00:00:00.250Z'), end: DAY.end },
      ),
    ).toBe('events_p20261101000000250_20261102000000');
    const long = { schema: 'dwh', table: `t${'x'.repeat(62)}` };
    const name = windowPartitionNameOf(long, DAY);
    expect(name).toHaveLength(63);
    expect(name).toMatch(/^tx+_[0-9a-f]{8}_p20261101000000_20261102000000$/);
    expect(windowPartitionNameOf({ ...long, schema: 'other' }, DAY)).not.toBe(name);
    expect(windowPartitionNameOf(long, DAY)).toBe(name);
  });

  it('parses range bounds as the catalog prints them; DEFAULT, list and multi-column bounds are not range bounds of one column', () => {
    expect(parseRangeBound("FOR VALUES FROM ('2026-11-01 00:00:00+00') TO ('2026-11-02 00:00:00+00')")).toEqual({
      from: '2026-11-01 00:00:00+00',
      to: '2026-11-02 00:00:00+00',
    });
    expect(parseRangeBound("FOR VALUES FROM (MINVALUE) TO ('2026-11-02 00:00:00+00')")).toEqual({
      from: null,
      to: '2026-11-02 00:00:00+00',
    });
    expect(parseRangeBound("FOR VALUES FROM ('a''b') TO (MAXVALUE)")).toEqual({ from: "a'b", to: null });
    for (const text of [
      'DEFAULT',
      "FOR VALUES IN ('a')",
      "FOR VALUES FROM ('1', '2') TO ('3', '4')",
      'FOR VALUES WITH (modulus 2, remainder 0)',
    ]) {
      expect(parseRangeBound(text), text).toBeUndefined();
    }
  });

  it('decides the swap: exactly one partition or none on the window, no other overlap, no default partition holding window rows, the name free', () => {
    const p = (name: string, over: Partial<PartitionFacts> = {}): PartitionFacts => ({
      name,
      isDefault: false,
      exact: false,
      overlaps: false,
      leaf: true,
      ...over,
    });
    expect(decideSwap([p('d0'), p('d1', { exact: true, overlaps: true })], false, 'n', false)).toEqual({
      swap: true,
      replaces: 'd1',
    });
    expect(decideSwap([p('d0'), p('def', { isDefault: true, overlaps: true })], false, 'n', false)).toEqual({
      swap: true,
    });
    expect(decideSwap([p('b', { overlaps: true }), p('a', { overlaps: true })], false, 'n', false)).toEqual({
      swap: false,
      reason: "the window is not exactly one partition's bounds: it overlaps partition a, b",
    });
    expect(decideSwap([p('d1', { exact: true, overlaps: true, leaf: false })], false, 'n', false)).toEqual({
      swap: false,
      reason: "the window's partition d1 is itself partitioned",
    });
    expect(decideSwap([], true, 'n', false)).toEqual({
      swap: false,
      reason: 'the default partition holds rows of the window',
    });
    expect(decideSwap([], false, 'n', true)).toEqual({
      swap: false,
      reason: 'the partition name n is taken by another table',
    });
  });

  it("a published partition's marker names the invocation and is never an owner marker", () => {
    const marker = publishedMarker('inv-1');
    expect(publishedInvocationOf(marker)).toBe('inv-1');
    expect(parseOwnerMarker(marker)).toBeUndefined();
    expect(publishedInvocationOf('{"kind":"cutpoint.staging.v1","invocationId":"inv-1","owner":"o"}')).toBeUndefined();
    expect(publishedInvocationOf('not json')).toBeUndefined();
  });
});

describe('the attachment proof (a stage that became the published partition)', () => {
  const table = { schema: 'dwh', table: 'cutpoint_stg_x' };
  const staging = { table, objectId: '42' };
  const partition = { schema: 'dwh', table: 'events_p20261101000000_20261102000000' };
  const attachedAbsence = { table, objectId: '42', attached: partition };
  const base = { parts: {}, evidence: {}, checkpoint: {}, staging };

  it('proves the stage gone for CUSTODY_RELEASED only when the journaled receipt names that very object as its stage', () => {
    const proved = proofsOf({ ...base, publication: { stagingObjectId: '42' }, absence: attachedAbsence });
    expect(proved).toMatchObject({ stageAbsent: true, stageAttached: true });
    expect(missingProof('CUSTODY_RELEASED', proved)).toBeUndefined();
    const otherObject = proofsOf({ ...base, publication: { stagingObjectId: '43' }, absence: attachedAbsence });
    expect(missingProof('CUSTODY_RELEASED', otherObject)).toMatch(/absence proved/);
    expect(missingProof('CUSTODY_RELEASED', proofsOf({ ...base, absence: attachedAbsence }))).toMatch(/absence proved/);
    expect(
      factProblems({
        invocationId: 'inv-1',
        state: 'CUSTODY_RELEASED',
        custodyEpoch: 1,
        facts: { ...base, publication: { stagingObjectId: '42' }, absence: attachedAbsence },
      }),
    ).toEqual([]);
  });

  it('never proves RETIRED: a retired invocation published nothing', () => {
    const proved = proofsOf({ ...base, publication: { stagingObjectId: '42' }, absence: attachedAbsence });
    expect(missingProof('RETIRED', proved)).toMatch(/RETIRED needs the owned stage dropped/);
    expect(missingProof('RETIRED', proofsOf({ staging, absence: { table, objectId: '42' } }))).toBeUndefined();
  });

  it('the absence fact carries the partition, validated on write and on read', () => {
    expect(validatePatch({ absence: attachedAbsence })).toEqual({ absence: attachedAbsence });
    expect(() => validatePatch({ absence: { table, objectId: '42', attached: { schema: 'dwh' } } })).toThrow(
      /absence is malformed/,
    );
    expect(() => validatePatch({ absence: { table, attached: partition } })).toThrow(/absence is malformed/);
    expect(parseFacts({ ownedStagesRecorded: true, absence: attachedAbsence }).absence).toEqual(attachedAbsence);
  });
});
