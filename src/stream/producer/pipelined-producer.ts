import type { LaneRef } from '../../domain/stream.js';
import type { Fence } from '../../domain/fence.js';
import type { Ports } from '../../ports/index.js';
import { LaneWriter } from '../append/lane-writer.js';
import { GroupProducer, type ProducerOptions } from './group-producer.js';

export interface PipelinedProducerOptions extends Omit<
  ProducerOptions,
  'append' | 'maxInFlight' | 'attemptPrefix' | 'onClose' | 'writerId'
> {
  /** Groups in flight: their WAL PUTs run ahead, their head CASes stay in order. Default 4. */
  depth?: number;
}

/**
 * The owner's fast path: group commit over the session's LaneWriter. One group = one WAL
 * PUT + one head transaction, no read; up to `depth` groups in flight, committed strictly
 * in order (LaneWriter). The writer mints each group's attempt id (fresh by construction),
 * so none of the evidence reads a caller's id needs. A group that does not commit halts
 * the producer and the groups bound after it are spent by the writer: every member still
 * gets its group's exact outcome. The writer holds the lane's writer slot from its first
 * group on: `close()` (call it in `finally` once the producer is done) flushes and releases
 * it; if a group's outcome stayed unknown to the writer (its append threw), the slot stays
 * held until `stream resolve --writer <producer.writerId>` settles the writer's groups.
 */
export function pipelinedProducer(
  lane: LaneRef,
  fence: Fence,
  ports: Ports,
  options: PipelinedProducerOptions = {},
): GroupProducer {
  const depth = options.depth ?? 4;
  const writer = new LaneWriter(ports, lane, fence, { depth });
  return new GroupProducer(lane, fence, ports, {
    ...options,
    maxInFlight: depth,
    append: (batch) => writer.append(batch.records),
    writerId: writer.writerId,
    onClose: () => writer.close(),
  });
}
