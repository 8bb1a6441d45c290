import { ValidationError } from '../domain/errors.js';
import { laneKeys, MAX_PARTITIONS, validateLane } from '../domain/stream.js';
import { writeExactlyOnce } from '../authority/resolve.js';
import type { Ports } from '../ports/index.js';
import { STREAM_CUT_POINTS } from './cut-points.js';

export interface CreatedStream {
  stream: string;
  partitions: number;
  /** Each lane as it stands after the call (an existing lane is reported, not reset). */
  lanes: Array<{ partition: number; committedEnd: number; trimOffset: number }>;
}

/**
 * Creates one head per partition (committed end 0, trim 0, no owner yet). Re-running it
 * is safe: existing lanes are reported, never reset.
 */
export async function createStream(input: unknown, ports: Ports): Promise<CreatedStream> {
  const { stream, partitions } = input as { stream?: unknown; partitions?: unknown };
  if (!Number.isInteger(partitions) || (partitions as number) < 1 || (partitions as number) > MAX_PARTITIONS) {
    throw new ValidationError('stream.invalid_partitions', `partitions must be an integer in [1, ${MAX_PARTITIONS}]`);
  }
  validateLane({ stream, partition: 0 });
  const result: CreatedStream = { stream: stream as string, partitions: partitions as number, lanes: [] };
  for (let partition = 0; partition < (partitions as number); partition++) {
    const lane = { stream: stream as string, partition };
    const key = laneKeys.head(lane);
    const write = await writeExactlyOnce(
      ports.authority,
      STREAM_CUT_POINTS.createHead,
      key,
      () => ports.authority.put(STREAM_CUT_POINTS.createHead, { ...key, ...lane, committedEnd: 0, trimOffset: 0 }, 'absent'),
      (item) => item.stream === lane.stream && item.partition === partition,
    );
    if (write.status === 'CONFLICT') throw new Error(`lane key ${key.pk} holds a foreign item`);
    result.lanes.push({ partition, committedEnd: write.item.committedEnd as number, trimOffset: write.item.trimOffset as number });
  }
  return result;
}
