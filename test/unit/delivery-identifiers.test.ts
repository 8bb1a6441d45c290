import { describe, expect, it } from 'vitest';
import {
  invocationIdOfExecution,
  chunkObjectKeyOf,
  evidenceObjectKeyOf,
  invocationIdFrom,
  isInvocationId,
  isOwnedStagingName,
  isSqlIdentifier,
  parseQualifiedName,
  qualifiedNameText,
  RECOVERY_INDEX_KIND,
  RECOVERY_KIND,
  recoveryIndexOf,
  recoveryProjectionOf,
  stagingTableNameOf,
  stagingTableOf,
  targetIdOf,
  validateInvocationId,
  type RecoverySummary,
} from '../../src/domain/delivery/identifiers.js';

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

/** Reference decoder, independent of the encoder under test. */
function decode(id: string): Uint8Array {
  const bits = [...id.slice(4)].map((c) => BASE32.indexOf(c).toString(2).padStart(5, '0')).join('');
  const bytes = new Uint8Array(16);
  for (let i = 0; i < 16; i++) bytes[i] = parseInt(bits.slice(i * 8, i * 8 + 8), 2);
  return bytes;
}

function bytes(seed: number): Uint8Array {
  const out = new Uint8Array(16);
  let x = seed;
  for (let i = 0; i < 16; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    out[i] = x >>> 24;
  }
  return out;
}

describe('invocation ids', () => {
  it('encode 16 bytes as inv- + 26 base32 characters', () => {
    expect(invocationIdFrom(new Uint8Array(16))).toBe(`inv-${'a'.repeat(26)}`);
    expect(invocationIdFrom(new Uint8Array(16).fill(255))).toBe(`inv-${'7'.repeat(25)}4`);
    // RFC 4648 "foobar" → MZXW6YTBOI, padded here to 16 bytes with zeros.
    const foobar = new Uint8Array(16);
    foobar.set(new TextEncoder().encode('foobar'));
    expect(invocationIdFrom(foobar).startsWith('inv-mzxw6ytboi')).toBe(true);
  });

  it('round-trip through an independent decoder and validate', () => {
    for (let seed = 1; seed <= 200; seed++) {
      const random = bytes(seed);
      const id = invocationIdFrom(random);
      expect(id).toHaveLength(30);
      expect(isInvocationId(id)).toBe(true);
      expect(validateInvocationId(id)).toBe(id);
      expect(decode(id)).toEqual(random);
    }
  });

  it('derive from a Step Functions execution ARN: deterministic, valid, different per execution, refused from anything else', () => {
    const arn = 'arn:aws:states:eu-west-1:111111111111:execution:deliver-window:console-1';
    const id = invocationIdOfExecution(arn);
    expect(isInvocationId(id)).toBe(true);
    expect(invocationIdOfExecution(arn)).toBe(id);
    expect(invocationIdOfExecution(`${arn}x`)).not.toBe(id);
    for (const bad of ['', 'console-1', 'arn:aws:states:eu-west-1:111111111111:stateMachine:deliver-window']) {
      expect(() => invocationIdOfExecution(bad)).toThrow(
        expect.objectContaining({ code: 'delivery.execution_invalid' }),
      );
    }
  });

  it('need exactly 16 random bytes', () => {
    for (const random of [new Uint8Array(15), new Uint8Array(17), [1, 2, 3] as unknown as Uint8Array]) {
      expect(() => invocationIdFrom(random)).toThrow(
        expect.objectContaining({ code: 'delivery.invocation_id_invalid' }),
      );
    }
  });

  it.each([
    'inv-',
    `inv-${'a'.repeat(25)}`,
    `inv-${'a'.repeat(27)}`,
    `INV-${'a'.repeat(26)}`,
    `inv-${'A'.repeat(26)}`,
    `inv-${'a'.repeat(25)}b`, // non-canonical: the last character's two spare bits must be zero
    `inv-${'a'.repeat(25)}1`,
    `run-${'a'.repeat(26)}`,
    `inv-${'a'.repeat(24)}/a`,
    42,
    null,
  ])('refuse %j without echoing it', (value) => {
    expect(isInvocationId(value)).toBe(false);
    try {
      validateInvocationId(value);
      expect.unreachable();
    } catch (e) {
      expect(e).toMatchObject({ code: 'delivery.invocation_id_invalid', name: 'Cutpoint.ValidationError' });
      if (typeof value === 'string' && value.length > 4) expect((e as Error).message).not.toContain(value);
    }
  });
});

describe('an invalid invocation id is refused with the exact rule it breaks', () => {
  const ok = `inv-${'b'.repeat(25)}q`;
  it.each([
    [42, 'is not text'],
    [`x${ok.slice(1)}`, 'does not start with inv-'],
    [`${ok}a`, 'has 27 characters after inv-, not 26'],
    [`inv-${'b'.repeat(24)}1q`, 'has a character outside [a-z2-7] at position 29'],
    [`inv-${'b'.repeat(25)}b`, 'ends in a character that cannot end an id'],
  ])('%j: %s', (value, problem) => {
    expect(() => validateInvocationId(value)).toThrow(
      expect.objectContaining({ code: 'delivery.invocation_id_invalid', message: expect.stringContaining(problem) }),
    );
    // The whole rule, the last character's set included.
    expect(() => validateInvocationId(value)).toThrow(/the last one of a, e, i, m, q, u, y or 4/);
  });
  it('a valid id passes', () => expect(validateInvocationId(ok)).toBe(ok));
});

describe('owned staging names', () => {
  const id = invocationIdFrom(bytes(1));

  it('derive from the invocation id: prefix + first 20 characters, an SQL identifier', () => {
    const name = stagingTableNameOf(id);
    expect(name).toBe(`cutpoint_stg_${id.slice(4, 24)}`);
    expect(name).toHaveLength(33);
    expect(isSqlIdentifier(name)).toBe(true);
    expect(isOwnedStagingName(name)).toBe(true);
    expect(stagingTableNameOf(id)).toBe(name); // pure: the same every time
    expect(stagingTableOf(id, { schema: 'dbo', name: 'events_daily' })).toEqual({ schema: 'dbo', name });
  });

  it('differ between invocations', () => {
    const names = new Set(Array.from({ length: 500 }, (_, i) => stagingTableNameOf(invocationIdFrom(bytes(i + 1)))));
    expect(names.size).toBe(500);
  });

  it('refuse an invalid invocation id', () => {
    expect(() => stagingTableNameOf('inv-robert"); DROP TABLE x; --')).toThrow(
      expect.objectContaining({ code: 'delivery.invocation_id_invalid' }),
    );
  });

  it('recognize the reserved prefix in any case', () => {
    expect(isOwnedStagingName('CUTPOINT_STG_abc')).toBe(true);
    expect(isOwnedStagingName('events_daily')).toBe(false);
    expect(isOwnedStagingName('cutpoint_stage')).toBe(false);
  });
});

describe('SQL names', () => {
  it.each(['a', '_x', 'Event_Id', 'x1', 'a'.repeat(63)])('identifier %j', (v) => expect(isSqlIdentifier(v)).toBe(true));
  it.each(['', '1a', 'a b', 'a-b', 'a.b', 'a"b', 'a]b', 'é', 'a'.repeat(64), 7, null])('not an identifier %j', (v) =>
    expect(isSqlIdentifier(v)).toBe(false),
  );

  it('qualified names are exactly two identifiers', () => {
    expect(parseQualifiedName('dbo.events')).toEqual({ schema: 'dbo', name: 'events' });
    expect(qualifiedNameText({ schema: 'dbo', name: 'events' })).toBe('dbo.events');
    for (const bad of ['events', 'a.b.c', '.events', 'dbo.', 'dbo .events', '[dbo].[events]', 3])
      expect(parseQualifiedName(bad)).toBeUndefined();
  });

  it('a target id is case-folded so one table never gets two journals', () => {
    expect(targetIdOf('warehouse', { schema: 'dbo', name: 'Events_Daily' })).toBe('warehouse.dbo.events_daily');
    expect(targetIdOf('warehouse', { schema: 'DBO', name: 'events_daily' })).toBe(
      targetIdOf('warehouse', { schema: 'dbo', name: 'EVENTS_DAILY' }),
    );
  });
});

describe('object keys', () => {
  const id = invocationIdFrom(bytes(2));

  it('derive from route, invocation and sequence', () => {
    expect(chunkObjectKeyOf('daily', id, 0)).toBe(`delivery/daily/${id}/chunk-0000000000.jsonl.gz`);
    expect(chunkObjectKeyOf('daily', id, 42)).toBe(`delivery/daily/${id}/chunk-0000000042.jsonl.gz`);
    expect(evidenceObjectKeyOf('daily', id)).toBe(`delivery/daily/${id}/evidence.json`);
  });

  it('sort in sequence order', () => {
    const keys = [0, 9, 10, 99, 100, 12345].map((s) => chunkObjectKeyOf('daily', id, s));
    expect([...keys].sort()).toEqual(keys);
  });

  it.each([
    ['daily', id, -1, 'delivery.chunk_seq_invalid'],
    ['daily', id, 1.5, 'delivery.chunk_seq_invalid'],
    ['daily', id, 1e10, 'delivery.chunk_seq_invalid'],
    ['Daily', id, 0, 'delivery.route_invalid'],
    ['../x', id, 0, 'delivery.route_invalid'],
    ['daily', 'inv-../../x', 0, 'delivery.invocation_id_invalid'],
  ])('refuse %j %j %j', (route, invocation, seq, code) => {
    expect(() => chunkObjectKeyOf(route, invocation, seq)).toThrow(expect.objectContaining({ code }));
  });
});

describe('recovery outputs', () => {
  const window = { start: '2026-11-22T00:00:00.000Z', end: '2026-11-29T00:00:00.000Z' };
  const summary = (seed: number, state: RecoverySummary['state'], ownedStagesRecorded = true): RecoverySummary => ({
    invocationId: invocationIdFrom(bytes(seed)),
    route: 'daily',
    state,
    facts: { ownedStagesRecorded },
    window,
  });

  it('an empty index is byte-for-byte the seed example with our kind', () => {
    expect(JSON.stringify(recoveryIndexOf([]))).toBe(
      '{"items":[],"kind":"cutpoint.delivery-recovery-index.v1","retained_custody_count":0,"schema_version":1}',
    );
  });

  it('counts retained custody and sorts items by invocation id', () => {
    const index = recoveryIndexOf([
      summary(3, 'PUBLICATION_UNKNOWN'),
      summary(1, 'CUSTODY_RELEASED'),
      summary(2, 'INCIDENT_RETAINED'),
      summary(4, 'RETIRED'),
      summary(5, 'PARTIAL_PROVED', false),
    ]);
    expect(index.kind).toBe(RECOVERY_INDEX_KIND);
    expect(index.retained_custody_count).toBe(3);
    const ids = index.items.map((i) => i.invocation_id);
    expect(ids).toEqual([...ids].sort());
    const partial = index.items.find((i) => i.state === 'PARTIAL_PROVED');
    expect(partial).toEqual({
      diagnostic_code: 'delivery.owned_stage_unrecorded',
      holds_custody: true,
      invocation_id: invocationIdFrom(bytes(5)),
      permitted_actions: [],
      route: 'daily',
      state: 'PARTIAL_PROVED',
    });
  });

  it('inspect projects state, diagnostic code and permitted actions, with sorted keys', () => {
    const p = recoveryProjectionOf(summary(1, 'PUBLICATION_UNKNOWN'));
    expect(p).toEqual({
      diagnostic_code: 'delivery.publication_unknown',
      holds_custody: true,
      invocation_id: invocationIdFrom(bytes(1)),
      kind: RECOVERY_KIND,
      permitted_actions: ['reconcile'],
      route: 'daily',
      schema_version: 1,
      state: 'PUBLICATION_UNKNOWN',
      window,
    });
    expect(Object.keys(p)).toEqual([...Object.keys(p)].sort());
    expect(Object.keys(p.window)).toEqual(['end', 'start']);
  });
});
