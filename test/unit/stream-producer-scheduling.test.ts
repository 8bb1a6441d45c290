import { describe, expect, it } from 'vitest';
import type { AppendOutcome } from '../../src/domain/stream.js';
import type { AppendBatchInput } from '../../src/stream/append-batch.js';
import { GroupProducer, type GroupReport } from '../../src/stream/producer/group-producer.js';
import type { Ports } from '../../src/ports/index.js';

/**
 * The producer's scheduling with a scripted append core (the core itself runs on the real
 * emulators in test/integration/stream-producer.test.ts): what goes in one group, what each
 * member is told, back-pressure and halting.
 */
const lane = { stream: 'orders', partition: 0 };
const session = { owner: 'writer', session: 'session-0123456789abcdef', epoch: 1 };
const ports = {} as Ports; // never touched: the scripted core ignores it
const rec = (s: string) => new TextEncoder().encode(s);
const text = (r: Uint8Array) => new TextDecoder().decode(r);

/** A core that commits every group at the next offsets unless `script` says otherwise, one call at a time. */
function scriptedCore(
  script: (call: number, batch: AppendBatchInput) => AppendOutcome['status'] | Error = () => 'KNOWN_COMMITTED',
) {
  const calls: AppendBatchInput[] = [];
  let end = 0;
  let running = 0;
  let maxRunning = 0;
  let release: (() => void) | undefined;
  let gate: Promise<void> | undefined;
  const core = {
    calls,
    get maxRunning() {
      return maxRunning;
    },
    /** Holds every group until `open()`. */
    hold() {
      gate = new Promise((r) => (release = r));
    },
    open() {
      release?.();
      gate = undefined;
    },
    async append(batch: AppendBatchInput): Promise<AppendOutcome> {
      calls.push(batch);
      running++;
      maxRunning = Math.max(maxRunning, running);
      try {
        await gate;
        await new Promise((r) => setTimeout(r, 1));
        const status = script(calls.length, batch);
        if (status instanceof Error) throw status;
        const base = { ...lane, attemptId: batch.attemptId, recordCount: batch.records.length };
        if (status !== 'KNOWN_COMMITTED') return { ...base, status, reason: 'scripted' };
        const start = end;
        end += batch.records.length;
        return { ...base, status, start, end };
      } finally {
        running--;
      }
    },
  };
  return core;
}

describe('group producer', () => {
  it('sends concurrent appends as one group and acks each member with its own sub-range', async () => {
    const core = scriptedCore();
    const producer = new GroupProducer(lane, session, ports, {
      lingerMs: 50,
      append: (b) => core.append(b),
      attemptPrefix: 'load',
    });
    const acks = await Promise.all([
      producer.append([rec('a1'), rec('a2')]),
      producer.append([rec('b1')]),
      producer.append([rec('c1'), rec('c2'), rec('c3')]),
    ]);
    expect(core.calls).toHaveLength(1);
    expect(core.calls[0]!.attemptId).toBe('load-g0');
    expect(core.calls[0]!.records.map(text)).toEqual(['a1', 'a2', 'b1', 'c1', 'c2', 'c3']);
    expect(acks.map((a) => [a.status, a.start, a.end, a.attemptId])).toEqual([
      ['KNOWN_COMMITTED', 0, 2, 'load-g0'],
      ['KNOWN_COMMITTED', 2, 3, 'load-g0'],
      ['KNOWN_COMMITTED', 3, 6, 'load-g0'],
    ]);
    await producer.close();
  });

  it('cuts groups at maxRecords, keeps at most maxInFlight groups running, and numbers them in order', async () => {
    const core = scriptedCore();
    const groups: GroupReport[] = [];
    const producer = new GroupProducer(lane, session, ports, {
      lingerMs: 60_000,
      maxRecords: 4,
      maxInFlight: 1,
      append: (b) => core.append(b),
      onGroup: (g) => groups.push(g),
    });
    const acks = Array.from({ length: 10 }, (_, i) => producer.append([rec(`r${i}`)]));
    await producer.close();
    const done = await Promise.all(acks);
    expect(core.calls.map((c) => c.records.length)).toEqual([4, 4, 2]);
    expect(core.maxRunning).toBe(1);
    expect(groups.map((g) => [g.sequence, g.records, g.outcome])).toEqual([
      [0, 4, 'KNOWN_COMMITTED'],
      [1, 4, 'KNOWN_COMMITTED'],
      [2, 2, 'KNOWN_COMMITTED'],
    ]);
    expect(done.map((a) => a.start)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(new Set(core.calls.map((c) => c.attemptId)).size).toBe(3);
  });

  it('sends a partial group once its oldest batch has lingered', async () => {
    const core = scriptedCore();
    const producer = new GroupProducer(lane, session, ports, {
      lingerMs: 5,
      maxRecords: 1000,
      append: (b) => core.append(b),
    });
    const ack = await producer.append([rec('alone')]);
    expect(ack).toMatchObject({ status: 'KNOWN_COMMITTED', start: 0, end: 1 });
    expect(core.calls).toHaveLength(1);
  });

  it('writable() waits while a whole group waits behind a full pipeline', async () => {
    const core = scriptedCore();
    core.hold();
    const producer = new GroupProducer(lane, session, ports, {
      lingerMs: 0,
      maxRecords: 2,
      append: (b) => core.append(b),
    });
    const acks = [producer.append([rec('1'), rec('2')]), producer.append([rec('3'), rec('4')])];
    let writable = false;
    const wait = producer.writable().then(() => (writable = true));
    await new Promise((r) => setTimeout(r, 20));
    expect(writable).toBe(false);
    core.open();
    await wait;
    expect(writable).toBe(true);
    await Promise.all(acks);
    await producer.close();
  });

  it.each(['MAY_HAVE_COMMITTED', 'KNOWN_NOT_COMMITTED'] as const)(
    'a %s group: every member gets it, waiting batches are never sent',
    async (status) => {
      const core = scriptedCore((call) => (call === 2 ? status : 'KNOWN_COMMITTED'));
      const producer = new GroupProducer(lane, session, ports, {
        lingerMs: 60_000,
        maxRecords: 2,
        append: (b) => core.append(b),
        attemptPrefix: 'f',
      });
      const acks = await Promise.all(
        Array.from({ length: 7 }, (_, i) => producer.append([rec(`r${i}`)])).concat([
          producer.close().then(() => undefined as never),
        ]),
      );
      const got = acks.slice(0, 7);
      expect(got.map((a) => a.status)).toEqual([
        'KNOWN_COMMITTED',
        'KNOWN_COMMITTED',
        status,
        status,
        'KNOWN_NOT_COMMITTED',
        'KNOWN_NOT_COMMITTED',
        'KNOWN_NOT_COMMITTED',
      ]);
      expect(got[2]!.attemptId).toBe('f-g1');
      expect(got[3]!.attemptId).toBe('f-g1');
      expect(got[4]!.attemptId).toBeUndefined();
      expect(got[4]!.reason).toMatch(/^Stream\.ProducerHalted: not sent; group f-g1 ended /);
      expect(core.calls).toHaveLength(2);
      expect(producer.halted).toBe(`group f-g1 ended ${status}`);
    },
  );

  it('a group whose append throws rejects every member with that error and halts', async () => {
    const boom = Object.assign(new Error('conflict'), { name: 'Stream.AttemptIdentityConflict' });
    const core = scriptedCore(() => boom);
    const producer = new GroupProducer(lane, session, ports, { lingerMs: 20, append: (b) => core.append(b) });
    const results = await Promise.allSettled([producer.append([rec('a')]), producer.append([rec('b')])]);
    expect(results.map((r) => r.status === 'rejected' && r.reason)).toEqual([boom, boom]);
    await expect(producer.append([rec('c')])).resolves.toMatchObject({ status: 'KNOWN_NOT_COMMITTED' });
    expect(core.calls).toHaveLength(1);
  });

  it('an onGroup observer that throws halts the producer but never loses a known outcome', async () => {
    const core = scriptedCore();
    const producer = new GroupProducer(lane, session, ports, {
      lingerMs: 0,
      append: (b) => core.append(b),
      onGroup: () => {
        throw new Error('observer bug');
      },
    });
    await expect(producer.append([rec('a')])).resolves.toMatchObject({ status: 'KNOWN_COMMITTED', start: 0, end: 1 });
    await producer.flush();
    expect(producer.halted).toMatch(/onGroup observer failed/);
    await expect(producer.append([rec('b')])).resolves.toMatchObject({ status: 'KNOWN_NOT_COMMITTED' });
    expect(core.calls).toHaveLength(1);
  });

  it('refuses bad knobs at construction, a bad batch without sending anything, and appends after close', async () => {
    expect(() => new GroupProducer(lane, session, ports, { maxInFlight: 0 })).toThrow(
      expect.objectContaining({ code: 'stream.producer_invalid_knob' }),
    );
    const core = scriptedCore();
    const producer = new GroupProducer(lane, session, ports, { append: (b) => core.append(b) });
    await expect(producer.append([])).rejects.toMatchObject({ code: 'stream.empty_batch' });
    await producer.close();
    await expect(producer.append([rec('late')])).rejects.toMatchObject({
      name: 'Stream.ProducerClosed',
      code: 'stream.producer_closed',
    });
    expect(core.calls).toHaveLength(0);
  });
});
