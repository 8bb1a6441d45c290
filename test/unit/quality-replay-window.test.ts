import { describe, expect, it } from 'vitest';
import { DEFAULT_REPLAY_WINDOW_DAYS } from '../../src/domain/delivery/manifest-types.js';
import {
  assertReplayWindowOpen,
  replayWindowDaysOf,
  replayWindowOf,
  windowEndOf,
  type WindowInput,
} from '../../src/domain/quality/replay-window.js';
import { completeCapsule, pendingCapsule, retiredCapsule } from './quality-fixtures.js';

// completion.at of the fixtures: 2026-01-02T03:05:00.000Z; 14 days later: 2026-01-16T03:05:00.000Z.
const END = '2026-01-16T03:05:00.000Z';
const at = (capsule: WindowInput['capsule'], now: string, extra: Partial<WindowInput> = {}) =>
  replayWindowOf({ capsule, days: 14, now, ...extra });

describe('replay window (N19, docs/rules.md#successors-and-replay-window)', () => {
  it('days default to 14, at most 35', () => {
    expect(DEFAULT_REPLAY_WINDOW_DAYS).toBe(14);
    expect(replayWindowDaysOf(undefined)).toBe(14);
    expect(replayWindowDaysOf(35)).toBe(35);
    for (const bad of [0, 36, 1.5, -1])
      expect(() => replayWindowDaysOf(bad)).toThrow(expect.objectContaining({ code: 'quality.admission_invalid' }));
  });

  it('ends at completion.at + days', () => {
    expect(windowEndOf('2026-01-02T03:05:00.000Z', 14)).toBe(END);
    expect(windowEndOf('2026-01-31T00:00:00Z', 35)).toBe('2026-03-07T00:00:00.000Z');
  });

  it('is open before the end, closed (expired) at and after it', () => {
    expect(at(completeCapsule(), '2026-01-16T03:04:59.999Z')).toEqual({ closed: false, endsAt: END });
    expect(at(retiredCapsule(), '2026-01-10T00:00:00.000Z')).toEqual({ closed: false, endsAt: END });
    expect(at(retiredCapsule(), END)).toEqual({ closed: true, endsAt: END, reason: 'expired', closedAt: null });
    expect(() => assertReplayWindowOpen(at(retiredCapsule(), '2026-02-01T00:00:00.000Z'))).toThrow(
      expect.objectContaining({
        name: 'Quality.ReplayWindowClosed',
        code: 'quality.replay_window_closed',
        reason: 'expired',
      }),
    );
  });

  it('a successor boundary closes it before its end', () => {
    const closed = retiredCapsule({
      replay: {
        windowEndsAt: END,
        closedAt: '2026-01-05T00:00:00.000Z',
        closedBy: 'inv-successor',
        reason: 'successor',
      },
    });
    expect(at(closed, '2026-01-06T00:00:00.000Z')).toEqual({
      closed: true,
      endsAt: END,
      reason: 'successor',
      closedAt: '2026-01-05T00:00:00.000Z',
    });
    expect(() => assertReplayWindowOpen(at(closed, '2026-01-06T00:00:00.000Z'))).toThrow(
      expect.objectContaining({ code: 'quality.replay_window_closed', reason: 'successor' }),
    );
  });

  it('a slot taken without a boundary closes it as boundary_missing', () => {
    const w = at(retiredCapsule(), '2026-01-06T00:00:00.000Z', { replacedWithoutBoundary: true });
    expect(w).toMatchObject({ closed: true, reason: 'boundary_missing' });
    expect(() => assertReplayWindowOpen(w)).toThrow(
      expect.objectContaining({ code: 'quality.replay_window_boundary_missing' }),
    );
  });

  it('nothing extends it: a stored end later than completion.at + days is malformed; archival copies are no input', () => {
    const extended = retiredCapsule({ replay: { windowEndsAt: '2026-03-01T00:00:00.000Z' } });
    expect(() => at(extended, '2026-01-06T00:00:00.000Z')).toThrow(
      expect.objectContaining({ code: 'quality.evidence_malformed' }),
    );
    const withArchive = {
      capsule: retiredCapsule(),
      days: 14,
      now: '2026-02-01T00:00:00.000Z',
      archivedUntil: '2027-01-01T00:00:00.000Z',
    };
    expect(replayWindowOf(withArchive)).toMatchObject({ closed: true, reason: 'expired' });
  });

  it('there is no window without a completion', () => {
    expect(at(pendingCapsule(), '2026-01-06T00:00:00.000Z')).toBeUndefined();
    expect(() => assertReplayWindowOpen(undefined)).toThrow(
      expect.objectContaining({ code: 'quality.action_not_permitted' }),
    );
  });
});
