import { describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/domain/digest.js';
import {
  assertCursorSession,
  assertSeekTarget,
  assertTrimRespectsCursors,
  commitDecision,
  validateGroup,
  validatePolicyGroups,
} from '../../src/stream/cursor/rules.js';

/** The consumer cursor rules (src/stream/cursor/rules.ts), pure: no I/O. */
const lane = { stream: 'orders', partition: 0 };
const head = { committedEnd: 20, trimOffset: 5 };
const current = { owner: 'consumer-b', session: 'session-b-0123456789', epoch: 2 };
const stale = { owner: 'consumer-a', session: 'session-a-0123456789', epoch: 1 };
const issuedStale = { owner: stale.owner, sessionSha256: sha256Hex(stale.session) };

describe('cursor commit rules', () => {
  it('moves forward up to the committed end; the same position again is success with nothing to write', () => {
    expect(commitDecision(lane, 'g', { position: 7 }, head, 12)).toBe('advance');
    expect(commitDecision(lane, 'g', { position: 7 }, head, 20)).toBe('advance');
    expect(commitDecision(lane, 'g', { position: 7 }, head, 7)).toBe('unchanged');
  });

  it('never past the committed end', () => {
    expect(() => commitDecision(lane, 'g', { position: 7 }, head, 21)).toThrow(
      expect.objectContaining({ name: 'Stream.CursorPastEnd', code: 'stream.cursor_past_end' }),
    );
  });

  it('never backwards: that is the separate, explicit seek', () => {
    expect(() => commitDecision(lane, 'g', { position: 7 }, head, 6)).toThrow(
      expect.objectContaining({ name: 'Stream.CursorBackwards', code: 'stream.cursor_backwards' }),
    );
  });

  it('never below the trim offset (a cursor an unprotected trim passed)', () => {
    expect(() => commitDecision(lane, 'g', { position: 1 }, head, 3)).toThrow(
      expect.objectContaining({ name: 'Stream.CursorBelowTrim', code: 'stream.cursor_below_trim' }),
    );
    expect(commitDecision(lane, 'g', { position: 1 }, head, 5)).toBe('advance');
  });

  it('a seek may go anywhere in [trim, committed end]', () => {
    expect(() => assertSeekTarget(lane, 'g', head, 5)).not.toThrow();
    expect(() => assertSeekTarget(lane, 'g', head, 20)).not.toThrow();
    expect(() => assertSeekTarget(lane, 'g', head, 4)).toThrow(
      expect.objectContaining({ code: 'stream.cursor_below_trim' }),
    );
    expect(() => assertSeekTarget(lane, 'g', head, 21)).toThrow(
      expect.objectContaining({ code: 'stream.cursor_past_end' }),
    );
  });
});

describe('cursor sessions: current, stale, forged', () => {
  const cursor = { fence: current };

  it('the current session passes', () => {
    expect(() => assertCursorSession(lane, 'g', cursor, { ...current })).not.toThrow();
  });

  it('a session the group issued once and a takeover superseded is stale: Stream.CursorFenced', () => {
    expect(() => assertCursorSession(lane, 'g', cursor, stale, issuedStale)).toThrow(
      expect.objectContaining({ name: 'Stream.CursorFenced', code: 'stream.cursor_fenced' }),
    );
  });

  it('a fence never issued is forged: Stream.CursorUnknownSession', () => {
    const forged = (session: typeof current, issued?: typeof issuedStale) => () =>
      assertCursorSession(lane, 'g', cursor, session, issued);
    const unknown = expect.objectContaining({
      name: 'Stream.CursorUnknownSession',
      code: 'stream.cursor_unknown_session',
    });
    expect(forged({ ...current, epoch: 3 })).toThrow(unknown); // above the cursor's epoch
    expect(forged({ ...current, session: 'another-session-0123' })).toThrow(unknown); // the current epoch, another session
    expect(forged({ ...stale, session: 'another-session-0123' }, issuedStale)).toThrow(unknown); // a lower epoch its record does not name
    expect(forged({ ...stale, owner: 'mallory' }, issuedStale)).toThrow(unknown);
    expect(() => assertCursorSession(lane, 'g', undefined, current)).toThrow(unknown); // a group never taken over
  });
});

describe('trim and the retention policy', () => {
  const positions = new Map([
    ['billing', 9],
    ['audit', 14],
  ]);

  it('a trim up to the slowest named cursor passes', () => {
    expect(() => assertTrimRespectsCursors(lane, 9, 5, ['audit', 'billing'], positions)).not.toThrow();
  });

  it('past it is refused, naming the slowest group and its position', () => {
    expect(() => assertTrimRespectsCursors(lane, 15, 5, ['audit', 'billing'], positions)).toThrow(
      expect.objectContaining({
        name: 'Stream.TrimPastCursor',
        code: 'stream.trim_past_cursor',
        group: 'billing',
        position: 9,
      }),
    );
  });

  it('a named group with no cursor yet has consumed nothing past the current trim', () => {
    expect(() => assertTrimRespectsCursors(lane, 6, 5, ['fresh'], positions)).toThrow(
      expect.objectContaining({ group: 'fresh', position: 5 }),
    );
  });

  it('groups the policy does not name do not hold a trim', () => {
    expect(() =>
      assertTrimRespectsCursors(
        lane,
        15,
        5,
        ['audit'],
        new Map([
          ['audit', 15],
          ['billing', 0],
        ]),
      ),
    ).not.toThrow();
  });

  it('validates group names and policies', () => {
    expect(validateGroup('billing.v2')).toBe('billing.v2');
    for (const bad of ['', '-x', 'a/b', 'a#b', 'x'.repeat(65), 3])
      expect(() => validateGroup(bad)).toThrow(expect.objectContaining({ code: 'stream.invalid_group' }));
    expect(validatePolicyGroups(['b', 'a'])).toEqual(['a', 'b']);
    expect(() => validatePolicyGroups(['a', 'a'])).toThrow(expect.objectContaining({ code: 'stream.invalid_policy' }));
    expect(() => validatePolicyGroups(Array.from({ length: 33 }, (_, i) => `g${i}`))).toThrow(
      expect.objectContaining({ code: 'stream.invalid_policy' }),
    );
  });
});
