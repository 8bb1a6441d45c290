import { beforeAll, describe, expect, it } from 'vitest';
import type { Ports } from '../../src/ports/index.js';
import { commitCursor } from '../../src/stream/cursor/commit.js';
import { CURSOR_CUT_POINTS } from '../../src/stream/cursor/cut-points.js';
import { setRetentionPolicy } from '../../src/stream/cursor/policy.js';
import { policyKey } from '../../src/stream/cursor/store.js';
import { seekCursor, takeOverCursorWithNewSession, takeoverCursor } from '../../src/stream/cursor/takeover.js';
import { STREAM_CUT_POINTS } from '../../src/stream/cut-points.js';
import { takeOverWithNewSession } from '../../src/stream/takeover.js';
import { trimLane } from '../../src/stream/trim.js';
import { cursorLane, cursorOf, headOf, newSession } from '../support/cursor-fixture.js';
import { freshStores, type TestStores } from '../support/emulators.js';
import { interceptPorts, sameKey } from '../support/intercept-ports.js';

/**
 * Consumer cursors (docs/rules.md#consumer-cursors; docs/rules.md#writer-takeover: a new append session AND
 * cursor owner session) against real DynamoDB Local and the S3 emulator: fenced commits,
 * takeover, seek, and trims that respect the slowest cursor a retention policy names.
 */
let stores: TestStores;
beforeAll(async () => {
  stores = await freshStores();
});

const commit = (
  lane: { stream: string; partition: number },
  group: string,
  session: unknown,
  position: number,
  ports: Ports = stores.ports,
) => commitCursor({ ...lane, group, session, position }, ports);

describe('cursor takeover fences the old consumer', () => {
  it('two consumers of one group: the takeover fences the first; its late commit is refused and the cursor is unchanged', async () => {
    const { lane } = await cursorLane(stores.ports, 'two', [4, 4, 4]);
    const first = await takeOverCursorWithNewSession(lane, 'billing', 'consumer-a', stores.ports);
    expect(first.epoch).toBe(1);
    expect(await cursorOf(stores.ports, lane, 'billing')).toMatchObject({
      group: 'billing',
      position: 0,
      fence: first,
    });
    expect(await commit(lane, 'billing', first, 4)).toMatchObject({ position: 4, previousPosition: 0, epoch: 1 });

    const second = await takeOverCursorWithNewSession(lane, 'billing', 'consumer-b', stores.ports);
    expect(second.epoch).toBe(2);
    const before = await cursorOf(stores.ports, lane, 'billing');
    expect(before).toMatchObject({ position: 4, fence: second }); // a takeover resumes from the committed position

    await expect(commit(lane, 'billing', first, 8)).rejects.toMatchObject({
      name: 'Stream.CursorFenced',
      code: 'stream.cursor_fenced',
    });
    expect(await cursorOf(stores.ports, lane, 'billing')).toEqual(before);
    expect(await commit(lane, 'billing', second, 8)).toMatchObject({ position: 8, previousPosition: 4 });
  });

  it('a forged fence is Stream.CursorUnknownSession and a group never taken over refuses every commit; nothing written', async () => {
    const { lane } = await cursorLane(stores.ports, 'forged', [3]);
    await expect(commit(lane, 'nobody', { owner: 'x', session: newSession(), epoch: 1 }, 1)).rejects.toMatchObject({
      code: 'stream.cursor_unknown_session',
    });
    expect(await cursorOf(stores.ports, lane, 'nobody')).toBeUndefined();
    const real = await takeOverCursorWithNewSession(lane, 'g', 'consumer-a', stores.ports);
    await takeOverCursorWithNewSession(lane, 'g', 'consumer-b', stores.ports);
    const before = await cursorOf(stores.ports, lane, 'g');
    for (const forged of [
      { ...real, session: newSession() },
      { ...real, epoch: 3 },
      { ...real, owner: 'mallory' },
    ]) {
      await expect(commit(lane, 'g', forged, 2)).rejects.toMatchObject({ code: 'stream.cursor_unknown_session' });
    }
    await expect(commit(lane, 'g', real, 2)).rejects.toMatchObject({ code: 'stream.cursor_fenced' });
    await expect(commit(lane, 'g', { owner: 'x' }, 2)).rejects.toMatchObject({ code: 'stream.invalid_session' });
    expect(await cursorOf(stores.ports, lane, 'g')).toEqual(before);
  });

  it('a stale consumer still blocked in I/O: its delayed commit lands after the takeover and is refused, the cursor unchanged', async () => {
    const { lane } = await cursorLane(stores.ports, 'stuck', [4, 4]);
    const first = await takeOverCursorWithNewSession(lane, 'g', 'consumer-a', stores.ports);
    const held = stores.hold(CURSOR_CUT_POINTS.commit);
    const late = commit(lane, 'g', first, 4).then(
      () => 'applied',
      (error: unknown) => (error as { code?: string }).code,
    );
    await held.reached; // the commit is in flight, its effect held until the takeover is done
    const second = await takeOverCursorWithNewSession(lane, 'g', 'consumer-b', stores.ports);
    held.release();
    expect(await late).toBe('stream.cursor_fenced');
    expect(await cursorOf(stores.ports, lane, 'g')).toMatchObject({ position: 0, fence: second, version: 2 });
  });

  it('the lane writer takeover and a cursor takeover are separate fences: neither fences the other', async () => {
    const { lane } = await cursorLane(stores.ports, 'separate', [3]);
    const consumer = await takeOverCursorWithNewSession(lane, 'g', 'consumer-a', stores.ports);
    await takeOverWithNewSession(lane, 'writer-2', stores.ports);
    expect(await commit(lane, 'g', consumer, 3)).toMatchObject({ position: 3 });
  });

  it('a re-run takeover with the same session id is idempotent (no second epoch)', async () => {
    const { lane } = await cursorLane(stores.ports, 'rerun', [2]);
    const session = newSession();
    const input = { ...lane, group: 'g', owner: 'consumer-a', session };
    expect(await takeoverCursor(input, stores.ports)).toMatchObject({ epoch: 1, position: 0, committedEnd: 2 });
    expect(await takeoverCursor(input, stores.ports)).toMatchObject({ epoch: 1 });
    expect((await cursorOf(stores.ports, lane, 'g'))?.version).toBe(1);
  });
});

describe('cursor commit rules on the store', () => {
  it('never past the committed end, never backwards, the same position again writes nothing', async () => {
    const { lane } = await cursorLane(stores.ports, 'rules', [5]);
    const s = await takeOverCursorWithNewSession(lane, 'g', 'consumer-a', stores.ports);
    await commit(lane, 'g', s, 3);
    const before = await cursorOf(stores.ports, lane, 'g');
    await expect(commit(lane, 'g', s, 6)).rejects.toMatchObject({ code: 'stream.cursor_past_end' });
    await expect(commit(lane, 'g', s, 2)).rejects.toMatchObject({ code: 'stream.cursor_backwards' });
    expect(await commit(lane, 'g', s, 3)).toMatchObject({ position: 3, previousPosition: 3 });
    expect(await cursorOf(stores.ports, lane, 'g')).toEqual(before);
  });

  it('a lost commit response is resolved by reloading: same group, fence and position is success, applied once', async () => {
    const { lane } = await cursorLane(stores.ports, 'lost', [5]);
    const s = await takeOverCursorWithNewSession(lane, 'g', 'consumer-a', stores.ports);
    const armed = stores.faults.arm(`${CURSOR_CUT_POINTS.commit}:lose-response`);
    const result = await commit(lane, 'g', s, 4);
    stores.faults.disarm();
    expect(armed.fired).toHaveLength(1);
    expect(result).toMatchObject({ position: 4, previousPosition: 0 });
    expect(await cursorOf(stores.ports, lane, 'g')).toMatchObject({ position: 4, version: 2, fence: s });
  });

  it('a group first taken over after a trim starts at the trim offset (nothing before it is handed out)', async () => {
    const { lane } = await cursorLane(stores.ports, 'late', [3, 3]);
    await trimLane({ ...lane, to: 3 }, stores.ports);
    await takeOverCursorWithNewSession(lane, 'late', 'consumer-a', stores.ports);
    expect(await cursorOf(stores.ports, lane, 'late')).toMatchObject({ position: 3 });
  });
});

describe('seek: the explicit, separate way to move a cursor back', () => {
  it('moves the cursor back as a takeover: the consumer it fenced cannot commit over it', async () => {
    const { lane } = await cursorLane(stores.ports, 'seek', [6]);
    const consumer = await takeOverCursorWithNewSession(lane, 'g', 'consumer-a', stores.ports);
    await commit(lane, 'g', consumer, 6);
    const session = newSession();
    expect(await seekCursor({ ...lane, group: 'g', owner: 'operator', session, to: 2 }, stores.ports)).toMatchObject({
      position: 2,
      epoch: 2,
    });
    await expect(commit(lane, 'g', consumer, 6)).rejects.toMatchObject({ code: 'stream.cursor_fenced' });
    expect(await cursorOf(stores.ports, lane, 'g')).toMatchObject({
      position: 2,
      fence: { owner: 'operator', session, epoch: 2 },
    });
    // The same seek again is success; the seeking session may commit forward from there.
    expect(await seekCursor({ ...lane, group: 'g', owner: 'operator', session, to: 2 }, stores.ports)).toMatchObject({
      position: 2,
      epoch: 2,
    });
    expect(await commit(lane, 'g', { owner: 'operator', session, epoch: 2 }, 5)).toMatchObject({ position: 5 });
  });

  it('never below the trim or past the committed end; nothing written', async () => {
    const { lane } = await cursorLane(stores.ports, 'seek-refuse', [3, 3]);
    await takeOverCursorWithNewSession(lane, 'g', 'consumer-a', stores.ports);
    await trimLane({ ...lane, to: 3 }, stores.ports);
    const before = await cursorOf(stores.ports, lane, 'g');
    const seek = (to: number) =>
      seekCursor({ ...lane, group: 'g', owner: 'operator', session: newSession(), to }, stores.ports);
    await expect(seek(2)).rejects.toMatchObject({ code: 'stream.cursor_below_trim' });
    await expect(seek(7)).rejects.toMatchObject({ code: 'stream.cursor_past_end' });
    expect(await cursorOf(stores.ports, lane, 'g')).toEqual(before);
  });
});

describe('trim respects the slowest cursor the retention policy names', () => {
  it('a trim past the slowest named cursor is refused with its group and position, nothing written; up to it passes', async () => {
    const { lane } = await cursorLane(stores.ports, 'policy', [4, 4, 4]);
    const billing = await takeOverCursorWithNewSession(lane, 'billing', 'consumer-a', stores.ports);
    const audit = await takeOverCursorWithNewSession(lane, 'audit', 'consumer-b', stores.ports);
    const loose = await takeOverCursorWithNewSession(lane, 'loose', 'consumer-c', stores.ports);
    await commit(lane, 'billing', billing, 8);
    await commit(lane, 'audit', audit, 4);
    expect(await setRetentionPolicy({ stream: lane.stream, groups: ['billing', 'audit'] }, stores.ports)).toEqual({
      stream: lane.stream,
      groups: ['audit', 'billing'],
    });
    const before = await headOf(stores.ports, lane);
    await expect(trimLane({ ...lane, to: 6 }, stores.ports)).rejects.toMatchObject({
      name: 'Stream.TrimPastCursor',
      code: 'stream.trim_past_cursor',
      group: 'audit',
      position: 4,
    });
    expect(await headOf(stores.ports, lane)).toEqual(before);
    expect(await trimLane({ ...lane, to: 4 }, stores.ports)).toMatchObject({ trimOffset: 4, previousTrimOffset: 0 });
    await commit(lane, 'audit', audit, 12);
    expect(await trimLane({ ...lane, to: 8 }, stores.ports)).toMatchObject({ trimOffset: 8 });
    // `loose` is not named: the trim passed it, and its next commit below the trim is refused.
    await expect(commit(lane, 'loose', loose, 2)).rejects.toMatchObject({ code: 'stream.cursor_below_trim' });
    // A named group with no cursor yet holds the trim at the current trim offset.
    await setRetentionPolicy({ stream: lane.stream, groups: ['audit', 'fresh'] }, stores.ports);
    await expect(trimLane({ ...lane, to: 9 }, stores.ports)).rejects.toMatchObject({ group: 'fresh', position: 8 });
    await setRetentionPolicy({ stream: lane.stream, groups: [] }, stores.ports);
    expect(await trimLane({ ...lane, to: 12 }, stores.ports)).toMatchObject({ trimOffset: 12 });
  });

  it('a seek that lands between the trim check and its CAS makes the trim decide again (the cursor is pinned in the trim transaction)', async () => {
    const { lane } = await cursorLane(stores.ports, 'race', [4, 4]);
    const consumer = await takeOverCursorWithNewSession(lane, 'g', 'consumer-a', stores.ports);
    await commit(lane, 'g', consumer, 8);
    await setRetentionPolicy({ stream: lane.stream, groups: ['g'] }, stores.ports);
    let raced = false;
    const racing = interceptPorts(stores.ports, {
      authority: {
        transact: async (cut, legs) => {
          if (cut === STREAM_CUT_POINTS.trimCas && !raced) {
            raced = true;
            await seekCursor({ ...lane, group: 'g', owner: 'operator', session: newSession(), to: 2 }, stores.ports);
          }
          return stores.ports.authority.transact(cut, legs);
        },
      },
    });
    await expect(trimLane({ ...lane, to: 6 }, racing)).rejects.toMatchObject({
      code: 'stream.trim_past_cursor',
      group: 'g',
      position: 2,
    });
    expect(raced).toBe(true);
    expect(await headOf(stores.ports, lane)).toMatchObject({ trimOffset: 0 });
    expect(await cursorOf(stores.ports, lane, 'g')).toMatchObject({ position: 2 });
  });

  it('a trim whose head went stale before a policy named a group without a cursor decides again: the same trim applied meanwhile is success', async () => {
    // Such a group holds the trim at the trim offset; judged on the stale head's, the trim
    // that is already in place was refused Stream.TrimPastCursor.
    const { lane } = await cursorLane(stores.ports, 'stale-policy', [4, 4]);
    let raced = false;
    const racing = interceptPorts(stores.ports, {
      authority: {
        get: async (key) => {
          if (sameKey(key, policyKey(lane.stream)) && !raced) {
            raced = true;
            expect(await trimLane({ ...lane, to: 6 }, stores.ports)).toMatchObject({
              trimOffset: 6,
              previousTrimOffset: 0,
            });
            await setRetentionPolicy({ stream: lane.stream, groups: ['fresh'] }, stores.ports);
          }
          return stores.ports.authority.get(key);
        },
      },
    });
    expect(await trimLane({ ...lane, to: 6 }, racing)).toMatchObject({ trimOffset: 6 });
    expect(raced).toBe(true);
    // A trim past it is still held by the group without a cursor, at the trim offset.
    await expect(trimLane({ ...lane, to: 7 }, stores.ports)).rejects.toMatchObject({
      code: 'stream.trim_past_cursor',
      group: 'fresh',
      position: 6,
    });
  });

  it('a policy naming a bad group or a missing stream is refused, nothing written', async () => {
    const { lane } = await cursorLane(stores.ports, 'bad-policy', [1]);
    await expect(
      setRetentionPolicy({ stream: lane.stream, groups: ['ok', 'no/slash'] }, stores.ports),
    ).rejects.toMatchObject({ code: 'stream.invalid_group' });
    await expect(setRetentionPolicy({ stream: 'no-such-stream', groups: ['ok'] }, stores.ports)).rejects.toMatchObject({
      code: 'stream.lane_missing',
    });
    expect(await trimLane({ ...lane, to: 1 }, stores.ports)).toMatchObject({ trimOffset: 1 });
  });
});
