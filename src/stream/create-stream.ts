import { ValidationError } from '../domain/errors.js';
import { laneKeys, MAX_PARTITIONS, validateLane } from '../domain/stream.js';
import { StreamShapeError } from '../domain/stream-errors.js';
import { writeExactlyOnce } from '../authority/resolve.js';
import type { AuthorityItem } from '../ports/authority.js';
import type { Ports } from '../ports/index.js';
import { STREAM_CUT_POINTS } from './cut-points.js';

export interface CreatedStream {
  stream: string;
  partitions: number;
  /** Each lane as it stands after the call (an existing lane is reported, not reset). */
  lanes: Array<{ partition: number; committedEnd: number; trimOffset: number }>;
}

/**
 * Creates one head per partition (committed end 0, trim 0, no owner yet), each naming the
 * stream's partition count. Re-running it with the same count is safe: existing lanes are
 * reported, never reset, and a run a crash interrupted is completed. Another count is
 * refused before anything is written (`stream.exists_with_other_shape`): a stream's
 * partitions never change.
 */
export async function createStream(input: unknown, ports: Ports): Promise<CreatedStream> {
  const { stream, partitions } = input as { stream?: unknown; partitions?: unknown };
  if (!Number.isInteger(partitions) || (partitions as number) < 1 || (partitions as number) > MAX_PARTITIONS) {
    throw new ValidationError('stream.invalid_partitions', `partitions must be an integer in [1, ${MAX_PARTITIONS}]`);
  }
  validateLane({ stream, partition: 0 });
  const name = stream as string;
  const count = partitions as number;
  const existing = await existingShape(ports, name, count);
  if (existing !== undefined) throw new StreamShapeError(name, existing, count);
  const result: CreatedStream = { stream: name, partitions: count, lanes: [] };
  for (let partition = 0; partition < count; partition++) {
    const lane = { stream: name, partition };
    const key = laneKeys.head(lane);
    const write = await writeExactlyOnce(
      ports.authority,
      STREAM_CUT_POINTS.createHead,
      key,
      () => ports.authority.put(STREAM_CUT_POINTS.createHead, { ...key, ...lane, partitions: count, committedEnd: 0, trimOffset: 0 }, 'absent'),
      // A head from before heads named the count is ours when the shape check passed.
      (item) => item.stream === name && item.partition === partition && (item.partitions ?? count) === count,
    );
    // A concurrent create of another shape won this lane's head.
    if (write.status === 'CONFLICT') throw new StreamShapeError(name, shapeOf(write.current), count);
    result.lanes.push({ partition, committedEnd: write.item.committedEnd as number, trimOffset: write.item.trimOffset as number });
  }
  return result;
}

/**
 * How the stream's existing shape differs from `asked` partitions, or undefined when there
 * is no stream yet or it has that shape (then the create completes or repeats). Lane 0's
 * head names the count; a head written before heads named it is measured by its lanes:
 * lanes 0..asked-1 present and lane `asked` absent is that shape.
 */
async function existingShape(ports: Ports, stream: string, asked: number): Promise<string | undefined> {
  const first = await ports.authority.get(laneKeys.head({ stream, partition: 0 }));
  if (!first) return undefined;
  if (typeof first.partitions === 'number') return first.partitions === asked ? undefined : shapeOf(first);
  const probed = Array.from({ length: Math.min(asked, MAX_PARTITIONS - 1) }, (_, i) => i + 1);
  const heads = await Promise.all(probed.map((partition) => ports.authority.get(laneKeys.head({ stream, partition }))));
  const lanes = 1 + heads.findIndex((head) => !head);
  if (lanes === 0) return asked === MAX_PARTITIONS ? undefined : `more than ${partitionsText(asked)}`;
  return lanes === asked ? undefined : partitionsText(lanes);
}

function shapeOf(head: AuthorityItem | undefined): string {
  const n = head?.partitions;
  return typeof n === 'number' ? partitionsText(n) : 'another number of partitions';
}

const partitionsText = (n: number): string => `${n} partition${n === 1 ? '' : 's'}`;
