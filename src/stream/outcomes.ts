import type { AppendOutcome, AppendStatus, LaneRef } from '../domain/stream.js';

/** KNOWN_COMMITTED for an attempt's committed range. */
export function knownCommitted(
  range: LaneRef & { attemptId: string; recordCount: number; start: number; end: number },
): AppendOutcome {
  return {
    status: 'KNOWN_COMMITTED',
    stream: range.stream,
    partition: range.partition,
    attemptId: range.attemptId,
    recordCount: range.recordCount,
    start: range.start,
    end: range.end,
  };
}

export function uncommittedOutcome(
  status: Exclude<AppendStatus, 'KNOWN_COMMITTED'>,
  ref: { stream: string; partition: number; attemptId: string },
  recordCount: number,
  reason: string,
): AppendOutcome {
  return { status, stream: ref.stream, partition: ref.partition, attemptId: ref.attemptId, recordCount, reason };
}
