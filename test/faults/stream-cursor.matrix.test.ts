import { beforeAll, describe, expect, it } from 'vitest';
import type { FaultKind } from '../../src/domain/faults.js';
import type { LaneRef } from '../../src/domain/stream.js';
import type { Fence } from '../../src/domain/fence.js';
import { commitCursor } from '../../src/stream/cursor/commit.js';
import { CURSOR_CUT_POINTS } from '../../src/stream/cursor/cut-points.js';
import { setRetentionPolicy } from '../../src/stream/cursor/policy.js';
import type { Cursor } from '../../src/stream/cursor/rules.js';
import { seekCursor, takeoverCursor } from '../../src/stream/cursor/takeover.js';
import { STREAM_CUT_POINTS } from '../../src/stream/cut-points.js';
import { trimLane } from '../../src/stream/trim.js';
import { cursorLane, cursorOf, headOf, newSession } from '../support/cursor-fixture.js';
import { freshStores, type TestStores } from '../support/emulators.js';
import { MATRIX_LANE, withKinds } from '../support/matrix-lane.js';

/**
 * The cursor fault matrix: every cursor cut point × the fault kinds of this lane
 * (test/support/matrix-lane.ts), then recovery (the same call again, same identity), then
 * the invariant: the cursor stays in [trim, committed end], moves forward only (but for
 * the explicit seek), each epoch was issued exactly once, and only the current session's
 * commits were ever applied — a fenced consumer's commit leaves the cursor unchanged.
 */
let stores: TestStores;
beforeAll(async () => {
  stores = await freshStores();
});

const GROUP = 'g';

interface World {
  lane: LaneRef;
  /** Every position observed after a step, and whether the step was a seek. */
  observed: Array<{ position: number; seek: boolean }>;
  consumer: Fence;
}

async function observe(w: World, seek = false): Promise<Cursor> {
  const cursor = (await cursorOf(stores.ports, w.lane, GROUP))!;
  w.observed.push({ position: cursor.position, seek });
  return cursor;
}

/** Runs a step under the armed fault; an injected crash or failure is what the caller saw. */
async function faulted(spec: string, step: () => Promise<unknown>): Promise<void> {
  const armed = stores.faults.arm(spec);
  try {
    await step();
  } catch (error) {
    expect((error as Error).name, String(error)).toMatch(/^Cutpoint\.(WorkerCrashed|EffectFailed|OutcomeUnknown)$/);
  } finally {
    stores.faults.disarm();
  }
  expect(armed.fired.length, `no fault fired for ${spec}`).toBeGreaterThan(0);
}

const take = (w: World, owner: string, session: string) =>
  takeoverCursor({ ...w.lane, group: GROUP, owner, session }, stores.ports);
const commit = (w: World, fence: Fence, position: number) =>
  commitCursor({ ...w.lane, group: GROUP, session: fence, position }, stores.ports);

/** Each cut point's scenario: the faulted call, its recovery, and what must hold after. */
const SCENARIOS: Record<string, (w: World, kind: FaultKind) => Promise<void>> = {
  [CURSOR_CUT_POINTS.takeover]: async (w, kind) => {
    const session = newSession();
    await faulted(`${CURSOR_CUT_POINTS.takeover}:${kind}`, () => take(w, 'consumer-b', session));
    const b = await take(w, 'consumer-b', session); // recovery: the same session again
    expect(b.epoch).toBe(2);
    await expectFenced(w, w.consumer, 8);
    await commit(w, { owner: 'consumer-b', session, epoch: 2 }, 8);
    expect((await observe(w)).position).toBe(8);
  },
  [CURSOR_CUT_POINTS.commit]: async (w, kind) => {
    await faulted(`${CURSOR_CUT_POINTS.commit}:${kind}`, () => commit(w, w.consumer, 8));
    await observe(w);
    expect(await commit(w, w.consumer, 8)).toMatchObject({ position: 8 }); // recovery
    expect((await observe(w)).position).toBe(8);
    const b = newSession();
    await take(w, 'consumer-b', b);
    await expectFenced(w, w.consumer, 12);
  },
  [CURSOR_CUT_POINTS.seek]: async (w, kind) => {
    const session = newSession();
    const seek = () => seekCursor({ ...w.lane, group: GROUP, owner: 'operator', session, to: 2 }, stores.ports);
    await faulted(`${CURSOR_CUT_POINTS.seek}:${kind}`, seek);
    expect(await seek()).toMatchObject({ position: 2, epoch: 2 }); // recovery
    expect((await observe(w, true)).position).toBe(2);
    await expectFenced(w, w.consumer, 12);
  },
  [CURSOR_CUT_POINTS.policy]: async (w, kind) => {
    const set = () => setRetentionPolicy({ stream: w.lane.stream, groups: [GROUP] }, stores.ports);
    await faulted(`${CURSOR_CUT_POINTS.policy}:${kind}`, set);
    expect(await set()).toEqual({ stream: w.lane.stream, groups: [GROUP] }); // recovery
    await expect(trimLane({ ...w.lane, to: 6 }, stores.ports)).rejects.toMatchObject({
      code: 'stream.trim_past_cursor',
      group: GROUP,
      position: 4,
    });
    expect(await trimLane({ ...w.lane, to: 4 }, stores.ports)).toMatchObject({ trimOffset: 4 });
  },
  /** The trim's own CAS, when the policy makes it a transaction with the named cursors. */
  [STREAM_CUT_POINTS.trimCas]: async (w, kind) => {
    await setRetentionPolicy({ stream: w.lane.stream, groups: [GROUP] }, stores.ports);
    await faulted(`${STREAM_CUT_POINTS.trimCas}:${kind}`, () => trimLane({ ...w.lane, to: 4 }, stores.ports));
    expect(await trimLane({ ...w.lane, to: 4 }, stores.ports)).toMatchObject({ trimOffset: 4 }); // recovery
    await expect(trimLane({ ...w.lane, to: 5 }, stores.ports)).rejects.toMatchObject({
      code: 'stream.trim_past_cursor',
      position: 4,
    });
  },
};

/** A fenced consumer's commit is refused and changes nothing. */
async function expectFenced(w: World, stale: Fence, position: number): Promise<void> {
  const before = await cursorOf(stores.ports, w.lane, GROUP);
  await expect(commit(w, stale, position)).rejects.toMatchObject({ code: 'stream.cursor_fenced' });
  expect(await cursorOf(stores.ports, w.lane, GROUP)).toEqual(before);
}

async function expectCursorInvariant(w: World): Promise<void> {
  const head = await headOf(stores.ports, w.lane);
  const cursor = (await cursorOf(stores.ports, w.lane, GROUP))!;
  expect(cursor.position).toBeLessThanOrEqual(head.committedEnd);
  expect(cursor.position).toBeGreaterThanOrEqual(head.trimOffset);
  for (let i = 1; i < w.observed.length; i++) {
    if (!w.observed[i]!.seek)
      expect(w.observed[i]!.position, `step ${i} moved the cursor back`).toBeGreaterThanOrEqual(
        w.observed[i - 1]!.position,
      );
  }
  // Every epoch up to the current one was issued exactly once, and names the cursor's session.
  const issued = await stores.ports.authority.query(
    `lane#${w.lane.stream}/${w.lane.partition}`,
    `cursor-fence#${GROUP}#`,
  );
  expect(issued.map((r) => r.epoch)).toEqual(Array.from({ length: cursor.fence.epoch }, (_, i) => i + 1));
  expect(issued.at(-1)).toMatchObject({ owner: cursor.fence.owner, group: GROUP });
}

describe(`cursor fault matrix (${MATRIX_LANE})`, () => {
  it.each(withKinds(Object.keys(SCENARIOS)))(
    '%s × %s, then recovery and the cursor invariant',
    async (cutPoint, kind) => {
      const { lane } = await cursorLane(stores.ports, `m-${kind}`, [4, 4, 4]);
      const session = newSession();
      await takeoverCursor({ ...lane, group: GROUP, owner: 'consumer-a', session }, stores.ports);
      const w: World = { lane, observed: [], consumer: { owner: 'consumer-a', session, epoch: 1 } };
      await observe(w);
      await commit(w, w.consumer, 4);
      await observe(w);
      await SCENARIOS[cutPoint]!(w, kind);
      await expectCursorInvariant(w);
    },
  );
});
