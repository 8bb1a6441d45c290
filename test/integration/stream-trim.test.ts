import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { FAULT_KINDS } from '../../src/domain/faults.js';
import { laneKeys, type LaneHead, type LaneRef } from '../../src/domain/stream.js';
import { runFlow } from '../../src/local/flow-runner.js';
import type { Fence } from '../../src/domain/fence.js';
import type { Ports } from '../../src/ports/index.js';
import { appendBatch } from '../../src/stream/append-batch.js';
import { createStream } from '../../src/stream/create-stream.js';
import { STREAM_CUT_POINTS } from '../../src/stream/cut-points.js';
import { describeStream } from '../../src/stream/describe.js';
import { readStream } from '../../src/stream/read.js';
import { takeOverWithNewSession } from '../../src/stream/takeover.js';
import { trimLane } from '../../src/stream/trim.js';
import { freshStores, type TestStores } from '../support/emulators.js';
import { interceptPorts } from '../support/intercept-ports.js';

/**
 * Trim by CAS (docs/rules.md#trim), reads racing it, and the
 * operator's view of a stream — against real DynamoDB Local and the S3 emulator.
 */
let stores: TestStores;
beforeAll(async () => {
  stores = await freshStores();
});

interface Fixture {
  lane: LaneRef;
  session: Fence;
  expected: string[];
}

let attempts = 0;
async function append(f: Fixture, size: number): Promise<void> {
  const records = Array.from({ length: size }, (_, j) =>
    new TextEncoder().encode(`${f.lane.stream}/${f.expected.length + j}`),
  );
  const outcome = await appendBatch(
    { ...f.lane, attemptId: `t-${++attempts}`, session: f.session, records },
    stores.ports,
  );
  expect(outcome.status).toBe('KNOWN_COMMITTED');
  f.expected.push(...records.map((r) => Buffer.from(r).toString('base64')));
}

/** A lane with ranges [0,3) [3,5) [5,9) unless told otherwise. */
async function laneWith(label: string, sizes = [3, 2, 4], partitions = 1): Promise<Fixture> {
  const stream = `trim-${label}-${randomUUID().slice(0, 6)}`;
  await createStream({ stream, partitions }, stores.ports);
  const lane = { stream, partition: 0 };
  const fence = await takeOverWithNewSession(lane, 'trim-test', stores.ports);
  const f: Fixture = { lane, session: fence, expected: [] };
  for (const size of sizes) await append(f, size);
  return f;
}

async function head(lane: LaneRef): Promise<LaneHead> {
  return (await stores.ports.authority.get(laneKeys.head(lane))) as unknown as LaneHead;
}

const trim = (lane: LaneRef, to: unknown) => trimLane({ ...lane, to }, stores.ports);
const withOffsets = (expected: string[], from: number) =>
  expected.slice(from).map((data, i) => ({ offset: from + i, data }));

/** The real ports with a hook run before a chosen call: a race, not a fake store. */
function racing(hooks: {
  beforeGet?: (key: string) => Promise<void>;
  beforeUpdate?: (cutPoint: string) => Promise<void>;
}): Ports {
  const { authority, objects } = stores.ports;
  return interceptPorts(stores.ports, {
    objects: {
      get: async (key, cutPoint) => {
        await hooks.beforeGet?.(key);
        return objects.get(key, cutPoint);
      },
    },
    authority: {
      update: async (cutPoint, ...rest) => {
        await hooks.beforeUpdate?.(cutPoint);
        return authority.update(cutPoint, ...rest);
      },
    },
  });
}

describe('trim by CAS', () => {
  it('advances monotonically, and re-trimming the same target is success that moves nothing', async () => {
    const f = await laneWith('advance');
    expect(await trim(f.lane, 3)).toEqual({ ...f.lane, trimOffset: 3, previousTrimOffset: 0, committedEnd: 9 });
    const version = (await head(f.lane)).version;
    expect(await trim(f.lane, 3)).toEqual({ ...f.lane, trimOffset: 3, previousTrimOffset: 3, committedEnd: 9 });
    expect((await head(f.lane)).version).toBe(version);
    expect(await trim(f.lane, 9)).toMatchObject({ trimOffset: 9, previousTrimOffset: 3 });
    expect(await head(f.lane)).toMatchObject({ trimOffset: 9, committedEnd: 9 });
  });

  it('refuses to move backwards and past the committed end; the trim offset stays put', async () => {
    const f = await laneWith('refuse');
    await trim(f.lane, 5);
    await expect(trim(f.lane, 4)).rejects.toMatchObject({
      name: 'Stream.TrimBackwards',
      code: 'stream.trim_backwards',
    });
    await expect(trim(f.lane, 10)).rejects.toMatchObject({
      name: 'Cutpoint.ValidationError',
      code: 'stream.trim_beyond_end',
    });
    await expect(trim(f.lane, -1)).rejects.toMatchObject({ code: 'stream.invalid_offset' });
    await expect(trim(f.lane, '6')).rejects.toMatchObject({ code: 'stream.invalid_offset' });
    await expect(trimLane({ stream: 'no-such-stream', partition: 0, to: 1 }, stores.ports)).rejects.toMatchObject({
      name: 'Stream.LaneMissing',
    });
    expect((await head(f.lane)).trimOffset).toBe(5);
  });

  it('a lost response at stream.trim.cas is resolved by reloading the trim: success, applied once', async () => {
    const f = await laneWith('lost');
    const version = (await head(f.lane)).version;
    const armed = stores.faults.arm(`${STREAM_CUT_POINTS.trimCas}:lose-response`);
    const result = await trim(f.lane, 5);
    stores.faults.disarm();
    expect(armed.fired).toHaveLength(1);
    expect(result).toEqual({ ...f.lane, trimOffset: 5, previousTrimOffset: 0, committedEnd: 9 });
    expect(await head(f.lane)).toMatchObject({ trimOffset: 5, version: version + 1 });
    // The caller, not knowing, retries: the same target is success.
    expect(await trim(f.lane, 5)).toMatchObject({ trimOffset: 5 });
    expect((await head(f.lane)).version).toBe(version + 1);
  });

  it.each(FAULT_KINDS.map((k) => [k]))(
    'after a %s fault at stream.trim.cas, a retry of the same target succeeds and the head moved exactly once',
    async (kind) => {
      const f = await laneWith(`f-${kind}`);
      const version = (await head(f.lane)).version;
      stores.faults.arm(`${STREAM_CUT_POINTS.trimCas}:${kind}`);
      const first = await trim(f.lane, 4).catch((error: unknown) => error);
      stores.faults.disarm();
      if (['crash-before', 'crash-after', 'fail'].includes(kind)) {
        expect(first).toMatchObject({ name: kind === 'fail' ? 'Cutpoint.EffectFailed' : 'Cutpoint.WorkerCrashed' });
      } else {
        expect(first).toMatchObject({ trimOffset: 4, previousTrimOffset: 0 });
      }
      expect(await trim(f.lane, 4)).toMatchObject({ trimOffset: 4, committedEnd: 9 });
      expect(await head(f.lane)).toMatchObject({ trimOffset: 4, committedEnd: 9, version: version + 1 });
      await expect(readStream({ ...f.lane, from: 3 }, stores.ports)).rejects.toMatchObject({
        name: 'Stream.OffsetTrimmed',
      });
      expect((await readStream({ ...f.lane, from: 4 }, stores.ports)).records).toEqual(withOffsets(f.expected, 4));
    },
  );

  it('a trim racing an append (CAS conflict) reloads and applies against the new head', async () => {
    const f = await laneWith('race-append');
    let raced = false;
    const ports = racing({
      beforeUpdate: async (cutPoint) => {
        if (cutPoint !== STREAM_CUT_POINTS.trimCas || raced) return;
        raced = true;
        await append(f, 2); // moves the head's version under the trim's CAS
      },
    });
    const result = await trimLane({ ...f.lane, to: 9 }, ports);
    expect(raced).toBe(true);
    expect(result).toEqual({ ...f.lane, trimOffset: 9, previousTrimOffset: 0, committedEnd: 11 });
    expect(await head(f.lane)).toMatchObject({ trimOffset: 9, committedEnd: 11, fence: f.session });
    expect((await readStream({ ...f.lane, from: 9 }, stores.ports)).records).toEqual(withOffsets(f.expected, 9));
  });

  it('needs no owner session: an operator trims whoever holds the lane, and appends go on after it', async () => {
    const f = await laneWith('owner');
    await trim(f.lane, 9);
    await append(f, 1);
    expect(await head(f.lane)).toMatchObject({ trimOffset: 9, committedEnd: 10 });
  });
});

describe('reads and trim', () => {
  it('reads below the trim offset are refused; at it they serve; bytes below trim stay until GC', async () => {
    const f = await laneWith('read');
    const walKeys = (await stores.ports.objects.list(`wal/${f.lane.stream}/`)).sort();
    expect(walKeys).toHaveLength(3);
    await trim(f.lane, 4);
    for (const from of [0, 3]) {
      await expect(readStream({ ...f.lane, from }, stores.ports)).rejects.toMatchObject({
        name: 'Stream.OffsetTrimmed',
        code: 'stream.offset_trimmed',
      });
    }
    const result = await readStream({ ...f.lane, from: 4 }, stores.ports);
    expect(result).toMatchObject({ trimOffset: 4, committedEnd: 9, next: 9, records: withOffsets(f.expected, 4) });
    expect((await stores.ports.objects.list(`wal/${f.lane.stream}/`)).sort()).toEqual(walKeys);
    // Trimmed to the end: the lane reads as empty at its end, not as an error.
    await trim(f.lane, 9);
    expect(await readStream({ ...f.lane, from: 9 }, stores.ports)).toMatchObject({ records: [], next: 9 });
  });

  it('a read racing a trim revalidates before returning: trimmed records are never returned', async () => {
    const f = await laneWith('race-read');
    let trimmed = false;
    const ports = racing({
      beforeGet: async () => {
        if (trimmed) return;
        trimmed = true;
        await trim(f.lane, 5); // lands after the read checked the head, before it returns
      },
    });
    await expect(readStream({ ...f.lane, from: 0, maxRecords: 100 }, ports)).rejects.toMatchObject({
      name: 'Stream.OffsetTrimmed',
    });
    expect(trimmed).toBe(true);
    // A read from at or past the new trim is unaffected by the same race.
    expect((await readStream({ ...f.lane, from: 5 }, ports)).records).toEqual(withOffsets(f.expected, 5));
  });

  it('a read racing trim and physical deletion reports the trim and quarantines nothing', async () => {
    const f = await laneWith('race-gc');
    const entry = await stores.ports.authority.get(laneKeys.index(f.lane, 3));
    let gone = false;
    const ports = racing({
      beforeGet: async () => {
        if (gone) return;
        gone = true;
        await trim(f.lane, 3);
        // As GC would, later: both copies of [0,3) are deleted once below the trim.
        for (const key of [entry!.gen0Key as string, entry!.walKey as string])
          await stores.ports.objects.delete('test.object.delete', key);
      },
    });
    await expect(readStream({ ...f.lane, from: 0 }, ports)).rejects.toMatchObject({ name: 'Stream.OffsetTrimmed' });
    expect(await stores.ports.authority.query(laneKeys.pk(f.lane), 'quarantine#')).toEqual([]);
  });
});

describe('stream-trim flow (local runner, same handler as Lambda)', () => {
  it('trims, and a refused trim fails the flow as Stream.TrimRefused without moving the offset', async () => {
    const f = await laneWith('flow');
    const ok = await runFlow('stream-trim', { ...f.lane, to: 3 }, { ports: stores.ports, retryIntervalMs: 0 });
    expect(ok).toMatchObject({
      status: 'SUCCEEDED',
      output: { ...f.lane, trimOffset: 3, previousTrimOffset: 0, committedEnd: 9 },
    });

    stores.faults.arm(`${STREAM_CUT_POINTS.trimCas}:crash-after`);
    const retried = await runFlow('stream-trim', { ...f.lane, to: 5 }, { ports: stores.ports, retryIntervalMs: 0 });
    stores.faults.disarm();
    expect(retried).toMatchObject({ status: 'SUCCEEDED', output: { trimOffset: 5, previousTrimOffset: 5 } });

    const back = await runFlow('stream-trim', { ...f.lane, to: 1 }, { ports: stores.ports, retryIntervalMs: 0 });
    expect(back).toMatchObject({ status: 'FAILED', error: 'Stream.TrimRefused' });
    expect((await head(f.lane)).trimOffset).toBe(5);
  });
});

describe('describe a stream', () => {
  it('lists every lane with ends, trim, owner and epoch — never the session id', async () => {
    const f = await laneWith('describe', [3, 2], 3);
    await trim(f.lane, 2);
    const described = await describeStream({ stream: f.lane.stream }, stores.ports);
    expect(described).toEqual({
      stream: f.lane.stream,
      partitions: 3,
      lanes: [
        { partition: 0, committedEnd: 5, trimOffset: 2, attemptWindow: '7d', owner: { owner: 'trim-test', epoch: 1 } },
        { partition: 1, committedEnd: 0, trimOffset: 0, attemptWindow: '7d' },
        { partition: 2, committedEnd: 0, trimOffset: 0, attemptWindow: '7d' },
      ],
    });
    expect(JSON.stringify(described)).not.toContain(f.session.session);
    expect(await describeStream({ stream: f.lane.stream, partitions: 2 }, stores.ports)).toMatchObject({
      partitions: 2,
    });
    await expect(describeStream({ stream: f.lane.stream, partitions: 4 }, stores.ports)).rejects.toMatchObject({
      name: 'Stream.LaneMissing',
    });
    await expect(describeStream({ stream: 'no-such-stream' }, stores.ports)).rejects.toMatchObject({
      name: 'Stream.LaneMissing',
    });
    await expect(describeStream({ stream: f.lane.stream, partitions: 0 }, stores.ports)).rejects.toMatchObject({
      code: 'stream.invalid_partitions',
    });
    await expect(describeStream({}, stores.ports)).rejects.toMatchObject({ code: 'stream.invalid_stream' });
  });

  it('shows a suspended lane with the attempt that holds it', async () => {
    const f = await laneWith('suspended', [1]);
    const h = await head(f.lane);
    await stores.ports.authority.update(
      'test.head.suspend',
      laneKeys.head(f.lane),
      { version: h.version },
      { suspendedBy: 'attempt-x' },
    );
    expect((await describeStream({ stream: f.lane.stream }, stores.ports)).lanes[0]).toMatchObject({
      suspendedBy: 'attempt-x',
    });
  });
});
