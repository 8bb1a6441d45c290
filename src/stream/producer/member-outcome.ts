import { CutpointError } from '../../domain/errors.js';
import type { AppendOutcome, AppendStatus } from '../../domain/stream.js';

/**
 * What one appender learns about its batch: exactly its group's interpretation. A
 * committed member names its own sub-range of the group's range; the attempt id is the
 * group's (the identity an operator resolves a MAY_HAVE_COMMITTED group by).
 */
export interface MemberOutcome {
  status: AppendStatus;
  stream: string;
  partition: number;
  /** The group's attempt; absent for a batch that was never sent (the producer halted first). */
  attemptId?: string;
  /** The group's sequence number in this producer. */
  group?: number;
  recordCount: number;
  start?: number;
  end?: number;
  reason?: string;
  pendingRepairs?: AppendOutcome['pendingRepairs'];
}

/** The reason a batch that was never sent carries (KNOWN_NOT_COMMITTED: appending it again is safe). */
export const PRODUCER_HALTED = 'Stream.ProducerHalted';

/**
 * Splits a group's outcome over its members, in arrival order. KNOWN_COMMITTED gives
 * member i the range [start + (records before i), + its records); any other status goes
 * to every member unchanged. A committed range that does not cover exactly the group's
 * records is evidence that contradicts itself: refused, never guessed around.
 */
export function memberOutcomes(group: AppendOutcome, sequence: number, sizes: readonly number[]): MemberOutcome[] {
  const total = sizes.reduce((a, b) => a + b, 0);
  const base = {
    status: group.status,
    stream: group.stream,
    partition: group.partition,
    attemptId: group.attemptId,
    group: sequence,
  };
  if (group.status !== 'KNOWN_COMMITTED') {
    return sizes.map((recordCount) => ({
      ...base,
      recordCount,
      ...(group.reason !== undefined && { reason: group.reason }),
    }));
  }
  const { start, end } = group;
  if (start === undefined || end === undefined || end - start !== total || group.recordCount !== total) {
    throw new CutpointError(
      'Stream.ProducerInconsistent',
      'stream.producer_inconsistent',
      `group ${group.attemptId} of ${total} records committed as [${String(start)}, ${String(end)}) with ${group.recordCount} records`,
    );
  }
  let at = start;
  return sizes.map((recordCount) => {
    const member: MemberOutcome = { ...base, recordCount, start: at, end: at + recordCount };
    if (group.pendingRepairs) member.pendingRepairs = group.pendingRepairs;
    at += recordCount;
    return member;
  });
}

/** A batch the producer never sent because an earlier group ended without committing. */
export function haltedOutcome(stream: string, partition: number, recordCount: number, haltedBy: string): MemberOutcome {
  return {
    status: 'KNOWN_NOT_COMMITTED',
    stream,
    partition,
    recordCount,
    reason: `${PRODUCER_HALTED}: not sent; ${haltedBy}`,
  };
}
