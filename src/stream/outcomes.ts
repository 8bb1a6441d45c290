import type { AppendIntent, AppendOutcome, AppendStatus } from '../domain/stream.js';

/** KNOWN_COMMITTED for an intent the head CAS marked with its range. */
export function committedOutcome(intent: Pick<AppendIntent, 'stream' | 'partition' | 'attemptId' | 'recordCount' | 'start' | 'end'>): AppendOutcome {
  return {
    status: 'KNOWN_COMMITTED',
    stream: intent.stream,
    partition: intent.partition,
    attemptId: intent.attemptId,
    recordCount: intent.recordCount,
    start: intent.start!,
    end: intent.end!,
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
