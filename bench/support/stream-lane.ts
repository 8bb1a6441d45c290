import { randomBytes } from 'node:crypto';
import { laneKeys, type LaneRef } from '../../src/domain/stream.js';
import type { Fence } from '../../src/domain/fence.js';
import type { Ports } from '../../src/ports/index.js';
import { createStream } from '../../src/stream/create-stream.js';
import { takeOverWithNewSession } from '../../src/stream/takeover.js';

/** The stream bench's lanes and batches, and its checks that every append landed once. */

let laneSeq = 0;

/** A fresh single-partition stream with one owner session. */
export async function ownedLane(ports: Ports, label: string): Promise<{ lane: LaneRef; session: Fence }> {
  const stream = `bench-${label}-${Date.now().toString(36)}-${laneSeq++}`;
  await createStream({ stream, partitions: 1 }, ports);
  const lane = { stream, partition: 0 };
  const fence = await takeOverWithNewSession(lane, 'bench-writer', ports);
  return { lane, session: fence };
}

export function batchOf(size: number, recordBytes: number): Uint8Array[] {
  return Array.from({ length: size }, () => new Uint8Array(randomBytes(recordBytes)));
}

export function expectCommitted(
  outcome: { status: string; start?: number; end?: number },
  size: number,
  what: string,
): void {
  if (
    outcome.status !== 'KNOWN_COMMITTED' ||
    outcome.end === undefined ||
    outcome.start === undefined ||
    outcome.end - outcome.start !== size
  ) {
    throw new Error(
      `bench bug: ${what} ended ${JSON.stringify(outcome)}, expected KNOWN_COMMITTED with ${size} records`,
    );
  }
}

/** Every append landed once: the head is at the records appended. */
export async function expectHead(ports: Ports, lane: LaneRef, records: number): Promise<void> {
  const head = await ports.authority.get(laneKeys.head(lane));
  if (head?.committedEnd !== records)
    throw new Error(`bench bug: head of ${lane.stream} at ${String(head?.committedEnd)} after ${records} records`);
}
