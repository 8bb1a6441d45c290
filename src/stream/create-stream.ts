import { attemptWindowOf, DEFAULT_ATTEMPT_WINDOW_SECONDS, parseAttemptWindow } from '../domain/attempt-time.js';
import { formatDuration } from '../domain/duration.js';
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
  /** How long a time-marked attempt id may be re-run on each lane (`7d`). */
  attemptWindow: string;
  /** Each lane as it stands after the call (an existing lane is reported, not reset). */
  lanes: Array<{ partition: number; committedEnd: number; trimOffset: number }>;
}

/**
 * Creates one head per partition (committed end 0, trim 0, no owner yet), each naming the
 * stream's partition count and attempt window (`attemptWindow`, a duration `1h`..`365d`,
 * default 7d: src/domain/attempt-time.ts). Re-running it with the same shape is safe:
 * existing lanes are reported, never reset, and a run a crash interrupted is completed.
 * Another count or window is refused before anything is written
 * (`stream.exists_with_other_shape`): a stream's shape never changes.
 */
export async function createStream(input: unknown, ports: Ports): Promise<CreatedStream> {
  const { stream, partitions, attemptWindow } = input as {
    stream?: unknown;
    partitions?: unknown;
    attemptWindow?: unknown;
  };
  if (!Number.isInteger(partitions) || (partitions as number) < 1 || (partitions as number) > MAX_PARTITIONS) {
    throw new ValidationError('stream.invalid_partitions', `partitions must be an integer in [1, ${MAX_PARTITIONS}]`);
  }
  validateLane({ stream, partition: 0 });
  const window = attemptWindow === undefined ? DEFAULT_ATTEMPT_WINDOW_SECONDS : parseAttemptWindow(attemptWindow);
  const name = stream as string;
  const count = partitions as number;
  const existing = await existingShape(ports, name, count, window);
  if (existing !== undefined) throw new StreamShapeError(name, existing.is, existing.asked);
  const result: CreatedStream = { stream: name, partitions: count, attemptWindow: formatDuration(window), lanes: [] };
  for (let partition = 0; partition < count; partition++) {
    const lane = { stream: name, partition };
    const key = laneKeys.head(lane);
    const write = await writeExactlyOnce(
      ports.authority,
      STREAM_CUT_POINTS.createHead,
      key,
      () =>
        ports.authority.put(
          STREAM_CUT_POINTS.createHead,
          { ...key, ...lane, partitions: count, attemptWindowSeconds: window, committedEnd: 0, trimOffset: 0 },
          'absent',
        ),
      // A head from before heads named the count (or the window) is ours when the shape check passed.
      (item) =>
        item.stream === name &&
        item.partition === partition &&
        (item.partitions ?? count) === count &&
        attemptWindowOf(item) === window,
    );
    // A concurrent create of another shape won this lane's head.
    if (write.status === 'CONFLICT') {
      const other = shapeOf(write.current, count, window);
      throw new StreamShapeError(name, other?.is ?? 'another shape', other?.asked ?? String(count));
    }
    result.lanes.push({
      partition,
      committedEnd: write.item.committedEnd as number,
      trimOffset: write.item.trimOffset as number,
    });
  }
  return result;
}

interface ShapeDifference {
  /** What the stream has (`2 partitions`, `attempt window 7d`). */
  is: string;
  /** What was asked, in the same terms (`3`, `1h`). */
  asked: string;
}

/**
 * How the stream's existing shape differs from `asked` partitions and `window`, or
 * undefined when there is no stream yet or it has that shape (then the create completes or
 * repeats). Lane 0's head names the count and the window; a head written before heads named
 * the count is measured by its lanes: lanes 0..asked-1 present and lane `asked` absent is
 * that shape; one written before heads named a window has the default.
 */
async function existingShape(
  ports: Ports,
  stream: string,
  asked: number,
  window: number,
): Promise<ShapeDifference | undefined> {
  const first = await ports.authority.get(laneKeys.head({ stream, partition: 0 }));
  if (!first) return undefined;
  if (typeof first.partitions === 'number') return shapeOf(first, asked, window);
  const probed = Array.from({ length: Math.min(asked, MAX_PARTITIONS - 1) }, (_, i) => i + 1);
  const heads = await Promise.all(probed.map((partition) => ports.authority.get(laneKeys.head({ stream, partition }))));
  const lanes = 1 + heads.findIndex((head) => !head);
  if (lanes === 0 && asked !== MAX_PARTITIONS)
    return { is: `more than ${partitionsText(asked)}`, asked: String(asked) };
  if (lanes !== 0 && lanes !== asked) return { is: partitionsText(lanes), asked: String(asked) };
  return windowDifference(first, window);
}

function shapeOf(head: AuthorityItem | undefined, asked: number, window: number): ShapeDifference | undefined {
  const n = head?.partitions;
  if (typeof n === 'number' && n !== asked) return { is: partitionsText(n), asked: String(asked) };
  if (!head) return undefined;
  return windowDifference(head, window);
}

function windowDifference(head: AuthorityItem, window: number): ShapeDifference | undefined {
  const has = attemptWindowOf(head);
  return has === window ? undefined : { is: `attempt window ${formatDuration(has)}`, asked: formatDuration(window) };
}

const partitionsText = (n: number): string => `${n} partition${n === 1 ? '' : 's'}`;
