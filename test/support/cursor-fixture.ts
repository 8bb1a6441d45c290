import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { laneKeys, type LaneHead, type LaneRef } from '../../src/domain/stream.js';
import type { Fence } from '../../src/domain/fence.js';
import type { Ports } from '../../src/ports/index.js';
import { appendBatch } from '../../src/stream/append-batch.js';
import { createStream } from '../../src/stream/create-stream.js';
import type { Cursor } from '../../src/stream/cursor/rules.js';
import { takeOverWithNewSession } from '../../src/stream/takeover.js';

/** A lane with `sizes` committed batches (records `<stream>/<offset>`) and its writer session. */
export async function cursorLane(
  ports: Ports,
  label: string,
  sizes: number[],
): Promise<{ lane: LaneRef; writer: Fence }> {
  const stream = `cur-${label}-${randomUUID().slice(0, 6)}`
    .toLowerCase()
    .replace(/[^a-z0-9._-]/g, '-')
    .slice(0, 60);
  await createStream({ stream, partitions: 1 }, ports);
  const lane = { stream, partition: 0 };
  const writer = await takeOverWithNewSession(lane, 'cursor-test-writer', ports);
  let offset = 0;
  for (const [i, size] of sizes.entries()) {
    const records = Array.from({ length: size }, () => new TextEncoder().encode(`${stream}/${offset++}`));
    const outcome = await appendBatch({ ...lane, attemptId: `c-${i}`, session: writer, records }, ports);
    expect(outcome.status).toBe('KNOWN_COMMITTED');
  }
  return { lane, writer };
}

export async function cursorOf(ports: Ports, lane: LaneRef, group: string): Promise<Cursor | undefined> {
  return (await ports.authority.get(laneKeys.cursor(lane, group))) as unknown as Cursor | undefined;
}

export async function headOf(ports: Ports, lane: LaneRef): Promise<LaneHead> {
  return (await ports.authority.get(laneKeys.head(lane))) as unknown as LaneHead;
}

export const newSession = () => randomUUID();
