import { describe, expect, it } from 'vitest';
import { JOURNAL_STATES } from '../../src/domain/delivery/journal-states.js';
import {
  generationDigest,
  indexProjection,
  inspectProjection,
  shortDigest,
  type InspectInput,
} from '../../src/domain/quality/projection.js';
import { replayReceipt, type ReceiptInput } from '../../src/domain/quality/receipt.js';
import { replayWindowOf } from '../../src/domain/quality/replay-window.js';
import { originalProbes } from '../../src/domain/quality/probes.js';
import type { CapsuleRead } from '../../src/domain/quality/outcome.js';
import {
  CANDIDATE_UUID,
  completeCapsule,
  failedCapsule,
  pendingCapsule,
  preparedCapsule,
  retiredCapsule,
  TOKEN,
  v1Capsule,
  withReader,
} from './quality-fixtures.js';

const base = {
  invocationId: 'inv-0123456789abcdefghjkmnpqrs',
  route: 'daily',
  targetId: 'events_ch.pub.events',
  window: { start: '2026-01-01T00:00:00.000Z', end: '2026-01-02T00:00:00.000Z' },
  evidence: 'valid' as const,
  now: '2026-01-03T00:00:00.000Z',
};
const published = {
  state: 'PUBLISHED' as const,
  hasPublicationFact: true,
  dispatchCount: 1,
  ownedStagesRecorded: true,
};

/** Every object's keys are in sorted order, at every depth. */
function assertSortedKeys(value: unknown): void {
  if (Array.isArray(value)) return value.forEach(assertSortedKeys);
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value);
    expect(keys).toEqual([...keys].sort());
    Object.values(value).forEach(assertSortedKeys);
  }
}

const GOLDEN_PENDING =
  '{"capsule_state":"TARGET_PENDING","capsule_version":2,"diagnostic_code":"quality.target_pending","digests":{"admission":"sha256:2222222222222222","generation":"sha256:42c9741fe79c413f","immutable_core":"sha256:cccccccccccccccc","inventory":"sha256:3333333333333333","policy":"sha256:1111111111111111"},"dispatch_count":1,"holds_custody":true,"invocation_id":"inv-0123456789abcdefghjkmnpqrs","journal_state":"PUBLISHED","kind":"cutpoint.quality-governance.v1","permitted_actions":["observe"],"reader_guard":{"held":false},"replay_details":{"current_run_id":"unknown","governance":"pending","last_observation":{"error_class":"KEEPER_NO_NODE","outcome":"TARGET_PENDING","remote_termination":"UNVERIFIED","run_id":"run-current"},"original_load_id":"load-original","original_run_id":"run-original","target_commit":"proven"},"replay_window":{"closed":false,"ends_at":null,"reason":null},"route":"daily","schema_version":1,"target_id":"events_ch.pub.events","window":{"end":"2026-01-02T00:00:00.000Z","start":"2026-01-01T00:00:00.000Z"}}';
const GOLDEN_HELD =
  '{"capsule_state":"PREPARED","capsule_version":2,"diagnostic_code":"quality.reader_guard_held","digests":{"admission":"sha256:2222222222222222","generation":"sha256:42c9741fe79c413f","immutable_core":"sha256:cccccccccccccccc","inventory":"sha256:3333333333333333","policy":"sha256:1111111111111111"},"dispatch_count":1,"holds_custody":true,"invocation_id":"inv-1123456789abcdefghjkmnpqrs","journal_state":"PUBLISHED","kind":"cutpoint.quality-governance.v1","permitted_actions":[],"reader_guard":{"held":true,"holder_run_id":"run-current","since":"2026-01-02T03:04:05.000Z"},"replay_details":{"current_run_id":"unknown","governance":"pending","last_observation":null,"original_load_id":"load-original","original_run_id":"run-original","target_commit":"proven"},"replay_window":{"closed":false,"ends_at":null,"reason":null},"route":"daily","schema_version":1,"target_id":"events_ch.pub.events","window":{"end":"2026-01-02T00:00:00.000Z","start":"2026-01-01T00:00:00.000Z"}}';
const GOLDEN_INDEX =
  '{"items":[{"capsule_state":"TARGET_PENDING","diagnostic_code":"quality.target_pending","governance":"pending","invocation_id":"inv-0123456789abcdefghjkmnpqrs","journal_state":"PUBLISHED","permitted_actions":["observe"],"reader_guard_held":false,"route":"daily","target_commit":"proven","target_id":"events_ch.pub.events"},{"capsule_state":"PREPARED","diagnostic_code":"quality.reader_guard_held","governance":"pending","invocation_id":"inv-1123456789abcdefghjkmnpqrs","journal_state":"PUBLISHED","permitted_actions":[],"reader_guard_held":true,"route":"daily","target_commit":"proven","target_id":"events_ch.pub.events"}],"kind":"cutpoint.quality-governance-index.v1","retained_custody_count":2,"retained_governance_count":2,"schema_version":1}';
const GOLDEN_RECEIPT =
  '{"acceptance":[{"columns":[],"dataset":"events_ch.pub.events","kind":"row_count","probe":"row_count_matches_receipts","result":"PASSED"},{"columns":["event_id"],"dataset":"events_ch.pub.events","kind":"unique_keys","probe":"unique_keys","result":"PASSED"}],"authority":{"binding":"match","completion_version":6,"continuity":"ok","observed_version":8},"current_run_id":"run-replay","dispatch_count":1,"generation":{"current":"sha256:42c9741fe79c413f","match":true,"published":"sha256:42c9741fe79c413f"},"immutable_core":"sha256:cccccccccccccccc","invocation_id":"inv-0123456789abcdefghjkmnpqrs","kind":"cutpoint.quality-replay-receipt.v1","quality":{"governance":"complete","probes":[{"name":"row_count_matches_receipts","result":"PASSED"},{"name":"unique_keys","result":"PASSED"}]},"reader_guard":"released","replayed_from":{"invocation_id":"inv-0123456789abcdefghjkmnpqrs","original_load_id":"load-original","original_run_id":"run-original"},"schema_version":1,"source_reads":0,"target_writes":0}';

// U9 is a governance acceptance case (docs/testing.md#governance-acceptance).
describe('inspect projection (U9, docs/rules.md#quality-commands)', () => {
  const pending = () => inspectProjection({ ...base, journal: published, capsule: pendingCapsule() });
  const held = () =>
    inspectProjection({
      ...base,
      invocationId: 'inv-1123456789abcdefghjkmnpqrs',
      journal: published,
      capsule: withReader(preparedCapsule()),
    });

  it('golden: TARGET_PENDING after a proven publication', () => {
    expect(JSON.stringify(pending())).toBe(GOLDEN_PENDING);
  });

  it('golden: guard held shows since + holder run, never the token', () => {
    const text = JSON.stringify(held());
    expect(text).toBe(GOLDEN_HELD);
    expect(text).not.toContain(TOKEN);
  });

  it('golden: inspect-all index and retention counts', () => {
    expect(JSON.stringify(indexProjection([held(), pending()]))).toBe(GOLDEN_INDEX);
  });

  const capsules: CapsuleRead[] = [
    'absent',
    'unreadable',
    'malformed',
    v1Capsule(),
    preparedCapsule(),
    withReader(pendingCapsule()),
    completeCapsule(),
    retiredCapsule(),
    failedCapsule(),
  ];
  it('both axes are always present, keys are sorted, no token, UUID or evidence key is printed', () => {
    for (const state of JOURNAL_STATES) {
      for (const capsule of capsules) {
        for (const journal of [{ ...published, state }, 'unreadable' as const]) {
          const input: InspectInput = { ...base, journal, capsule, replayWindowDays: 14 };
          const p = inspectProjection(input);
          const text = JSON.stringify(p);
          expect(['proven', 'not_proven', 'unknown']).toContain(p.replay_details.target_commit);
          expect(['complete', 'pending', 'failed', 'not_started', 'staged_only', 'unknown']).toContain(
            p.replay_details.governance,
          );
          assertSortedKeys(p);
          expect(text).not.toContain(TOKEN);
          expect(text).not.toContain(CANDIDATE_UUID);
          expect(text).not.toContain('prepared.json');
          expect(text).not.toContain('completion.json');
          expect(text).not.toContain('undefined');
        }
      }
    }
  });

  it('target_commit=proven does not imply governance=complete (N1, N9)', () => {
    const p = pending();
    expect(p.replay_details).toMatchObject({ target_commit: 'proven', governance: 'pending' });
  });

  it('v1 is projected unchanged: capsule_version 1, staged_only, no generation', () => {
    const p = inspectProjection({ ...base, journal: published, capsule: v1Capsule() });
    expect(p).toMatchObject({ capsule_state: 'PREPARED', capsule_version: 1, digests: { generation: null } });
    expect(p.replay_details.governance).toBe('staged_only');
  });

  it('an unreadable journal gives unknowns and no action', () => {
    const p = inspectProjection({ ...base, journal: 'unreadable', capsule: completeCapsule() });
    expect(p).toMatchObject({
      journal_state: 'unknown',
      dispatch_count: 'unknown',
      holds_custody: 'unknown',
      permitted_actions: [],
    });
    expect(p.replay_details.target_commit).toBe('unknown');
  });

  it('a retired capsule shows its window, closed by the clock after its end', () => {
    const released = { ...published, state: 'CUSTODY_RELEASED' as const };
    const open = inspectProjection({ ...base, journal: released, capsule: retiredCapsule(), replayWindowDays: 14 });
    expect(open).toMatchObject({
      permitted_actions: ['replay'],
      replay_window: { closed: false, ends_at: '2026-01-16T03:05:00.000Z', reason: null },
    });
    const late = inspectProjection({
      ...base,
      now: '2026-02-01T00:00:00.000Z',
      journal: released,
      capsule: retiredCapsule(),
    });
    expect(late).toMatchObject({
      permitted_actions: [],
      diagnostic_code: 'quality.replay_window_closed',
      replay_window: { closed: true, reason: 'expired' },
    });
  });

  it('retained_governance_count counts non-COMPLETE v2, held guards and unknown capsules only', () => {
    const of = (capsule: CapsuleRead) => inspectProjection({ ...base, journal: published, capsule });
    expect(indexProjection([of(completeCapsule()), of(v1Capsule()), of('absent')]).retained_governance_count).toBe(0);
    expect(
      indexProjection([of(failedCapsule()), of('unreadable'), of(preparedCapsule())]).retained_governance_count,
    ).toBe(3);
  });

  it('digests print as sha256: + 16 hex; generation only as a digest', () => {
    expect(shortDigest('ab'.repeat(32))).toBe('sha256:abababababababab');
    expect(generationDigest(CANDIDATE_UUID)).toMatch(/^sha256:[0-9a-f]{16}$/);
    expect(() => shortDigest(CANDIDATE_UUID)).toThrow();
  });
});

describe('replay receipt (U9, docs/rules.md#replay-receipt, N21, I9)', () => {
  const probes = originalProbes({
    rules: { rowCountMatchesReceipts: true, uniqueKeys: true, notNull: [], assertions: [] },
    keyColumns: ['event_id'],
    receiptsTotal: 1000,
  });
  const capsule = retiredCapsule();
  const input: ReceiptInput = {
    invocationId: base.invocationId,
    currentRunId: 'run-replay',
    dispatchCount: 1,
    capsule,
    probes,
    results: probes.map((p) => ({ name: p.name, result: 'PASSED' as const })),
    dataset: base.targetId,
    completion: { evidence: 'valid', version: 6 },
    replayWindow: replayWindowOf({ capsule, days: 14, now: base.now }),
    authorityBinding: 'match',
    currentGenerationUuid: CANDIDATE_UUID,
  };

  it('golden: names the original run/load ids, the same core, a released guard, zero reads and writes', () => {
    const text = JSON.stringify(replayReceipt(input));
    expect(text).toBe(GOLDEN_RECEIPT);
    expect(text).not.toContain(CANDIDATE_UUID);
  });

  const refusals: Array<[string, Partial<ReceiptInput>, string]> = [
    ['completion evidence missing', { completion: { evidence: 'missing' } }, 'quality.evidence_missing'],
    ['completion evidence malformed', { completion: { evidence: 'malformed' } }, 'quality.evidence_malformed'],
    ['completion evidence unreadable', { completion: { evidence: 'unreadable' } }, 'quality.evidence_unreadable'],
    ['version rollback', { completion: { evidence: 'valid', version: 9 } }, 'quality.authority_version_rollback'],
    ['authority replaced', { authorityBinding: 'replaced' }, 'quality.authority_replaced'],
    [
      'generation changed',
      { currentGenerationUuid: '0f1e2d3c-4b5a-8697-a8b9-cadbecfd0e10' },
      'quality.generation_changed',
    ],
    [
      'window expired',
      { replayWindow: replayWindowOf({ capsule, days: 14, now: '2026-03-01T00:00:00.000Z' }) },
      'quality.replay_window_closed',
    ],
    ['not COMPLETE', { capsule: pendingCapsule() }, 'quality.action_not_permitted'],
    ['v1', { capsule: v1Capsule() }, 'quality.action_not_permitted'],
    ['never dispatched', { dispatchCount: 0 }, 'quality.action_not_permitted'],
    [
      'a failed original result',
      {
        results: [
          { name: probes[0]!.name, result: 'PASSED' },
          { name: probes[1]!.name, result: 'FAILED' },
        ],
      },
      'quality.evidence_malformed',
    ],
    [
      'a malformed original result',
      {
        results: [
          { name: probes[0]!.name, result: 'MALFORMED' },
          { name: probes[1]!.name, result: 'PASSED' },
        ],
      },
      'quality.evidence_malformed',
    ],
    [
      'a missing original result',
      { results: [{ name: probes[0]!.name, result: 'PASSED' }] },
      'quality.evidence_malformed',
    ],
    ['no probes at all', { probes: [], results: [] }, 'quality.evidence_malformed'],
  ];
  it.each(refusals)('%s ⇒ no receipt (%s)', (_label, over, code) => {
    expect(() => replayReceipt({ ...input, ...over })).toThrow(expect.objectContaining({ code }));
  });
});
