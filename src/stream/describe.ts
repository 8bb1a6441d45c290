import { attemptWindowOf } from '../domain/attempt-time.js';
import { formatDuration } from '../domain/duration.js';
import { ValidationError } from '../domain/errors.js';
import { laneKeys, MAX_PARTITIONS, validateLane, type LaneHead } from '../domain/stream.js';
import { LaneMissingError } from '../domain/stream-errors.js';
import type { RunbookLink } from '../domain/runbook-link.js';
import { runbookLinkOf } from '../docs/runbook/ref.js';
import type { Ports } from '../ports/index.js';
import { describeLifecycle, type LifecycleDescription } from './gc/describe.js';

export interface LaneDescription {
  partition: number;
  committedEnd: number;
  trimOffset: number;
  /** How long a time-marked attempt id may be re-run on the lane (`7d`; src/domain/attempt-time.ts). */
  attemptWindow: string;
  /** Owner and epoch of the session holding the lane; never its session id (a fencing secret). */
  owner?: { owner: string; epoch: number };
  /** The attempt whose unknown outcome holds the lane, while it is suspended. */
  suspendedBy?: string;
  /** The LaneWriter holding the lane's writer slot (`resolving`: a `stream resolve --writer` of it is under way). */
  writer?: { id: string; epoch: number; resolving?: true };
  /** While the lane is suspended or its writer slot held (MAY_HAVE_COMMITTED): the runbook page and the resolve command. */
  runbook?: RunbookLink;
  /** GC: lifecycle roots by state and fate, orphans and superseded copies with their grace deadlines (once GC has run). */
  lifecycle?: LifecycleDescription;
}

export interface StreamDescription {
  stream: string;
  partitions: number;
  lanes: LaneDescription[];
}

/** Heads probed in parallel per round when the partition count is not given. */
const PROBE_CHUNK = 16;

/**
 * Describes a stream's lanes from their heads. With `partitions`, exactly lanes
 * 0..partitions-1 (a missing one is Stream.LaneMissing); without, lanes are probed from 0
 * until the first missing head (at most MAX_PARTITIONS). No lane 0 means no stream.
 */
export async function describeStream(input: unknown, ports: Ports): Promise<StreamDescription> {
  const { stream } = validateLane({ stream: (input as { stream?: unknown } | null)?.stream, partition: 0 });
  const given = (input as { partitions?: unknown }).partitions;
  if (
    given !== undefined &&
    (!Number.isInteger(given) || (given as number) < 1 || (given as number) > MAX_PARTITIONS)
  ) {
    throw new ValidationError('stream.invalid_partitions', `partitions must be an integer in [1, ${MAX_PARTITIONS}]`);
  }
  const limit = (given as number | undefined) ?? MAX_PARTITIONS;
  const lanes: LaneDescription[] = [];
  for (let first = 0; first < limit; first += PROBE_CHUNK) {
    const partitions = Array.from({ length: Math.min(PROBE_CHUNK, limit - first) }, (_, i) => first + i);
    const heads = await Promise.all(
      partitions.map((partition) => ports.authority.get(laneKeys.head({ stream, partition }))),
    );
    for (const [i, item] of heads.entries()) {
      const partition = partitions[i]!;
      if (!item) {
        if (given !== undefined || partition === 0) throw new LaneMissingError({ stream, partition });
        return { stream, partitions: lanes.length, lanes };
      }
      const lifecycle = await describeLifecycle(ports, { stream, partition });
      lanes.push({ ...describeLane(partition, item as unknown as LaneHead), ...(lifecycle ? { lifecycle } : {}) });
    }
  }
  return { stream, partitions: lanes.length, lanes };
}

/**
 * The runbook of a lane an attempt holds: MAY_HAVE_COMMITTED, with its page's resolve
 * command (`resolve the writer` when a LaneWriter's slot holds it). A lane nothing holds has
 * no durable state to act on.
 */
export function laneRunbookOf(head: Pick<LaneHead, 'suspendedBy' | 'writer'>): RunbookLink | undefined {
  if (head.suspendedBy) return runbookLinkOf('stream', 'MAY_HAVE_COMMITTED', { permitted: ['resolve'] });
  if (head.writer) return runbookLinkOf('stream', 'MAY_HAVE_COMMITTED', { permitted: ['resolve the writer'] });
  return undefined;
}

function describeLane(partition: number, head: LaneHead): LaneDescription {
  const runbook = laneRunbookOf(head);
  return {
    partition,
    committedEnd: head.committedEnd,
    trimOffset: head.trimOffset,
    attemptWindow: formatDuration(attemptWindowOf(head)),
    ...(head.fence ? { owner: { owner: head.fence.owner, epoch: head.fence.epoch } } : {}),
    ...(head.suspendedBy ? { suspendedBy: head.suspendedBy } : {}),
    ...(head.writer
      ? {
          writer: {
            id: head.writer.id,
            epoch: head.writer.epoch,
            ...(head.writer.resolvingSince !== undefined && { resolving: true as const }),
          },
        }
      : {}),
    ...(runbook ? { runbook } : {}),
  };
}
