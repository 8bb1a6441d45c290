import { ValidationError } from '../../domain/errors.js';
import { MAX_BATCH_BYTES, MAX_RECORD_BYTES } from '../../domain/stream.js';
import { BATCH_HEADER_BYTES, RECORD_FRAME_BYTES, type ProducerKnobs } from './knobs.js';

/** One appender's batch waiting for a group, with what its caller is owed. */
export interface PendingMember<T> {
  records: readonly Uint8Array[];
  /** Framed bytes of its records (no batch header). */
  bytes: number;
  /** Epoch milliseconds it arrived: its linger runs from here. */
  arrivedAt: number;
  ticket: T;
}

/**
 * A member's framed size, refusing what no group could carry: an empty batch, a record
 * over MAX_RECORD_BYTES, or one batch over MAX_BATCH_BYTES on its own. Anything smaller
 * is always accepted: a group that would grow past its limits is cut, never refused.
 */
export function memberBytes(records: readonly Uint8Array[]): number {
  if (!Array.isArray(records) || records.length === 0)
    throw new ValidationError('stream.empty_batch', 'a batch needs at least one record');
  let bytes = 0;
  for (const record of records) {
    if (!(record instanceof Uint8Array))
      throw new ValidationError('stream.invalid_records', 'records must be byte arrays');
    if (record.byteLength > MAX_RECORD_BYTES)
      throw new ValidationError('stream.record_too_large', `a record may be at most ${MAX_RECORD_BYTES} bytes`);
    bytes += RECORD_FRAME_BYTES + record.byteLength;
  }
  if (BATCH_HEADER_BYTES + bytes > MAX_BATCH_BYTES) {
    throw new ValidationError(
      'stream.batch_too_large',
      `a batch may be at most ${MAX_BATCH_BYTES} bytes; split it over several appends`,
    );
  }
  return bytes;
}

/**
 * The grouping rule, pure: members wait in arrival order; a group is the longest prefix
 * whose records and WAL bytes stay within maxRecords and maxBytes — except that a group
 * always takes at least its first member (one batch over the knobs travels alone). The
 * cut depends only on the members' sizes and order, never on timing.
 */
export class GroupBuffer<T> {
  private readonly members: Array<PendingMember<T>> = [];
  private records = 0;
  private bytes = 0;

  constructor(private readonly knobs: Pick<ProducerKnobs, 'maxBytes' | 'maxRecords'>) {}

  push(member: PendingMember<T>): void {
    this.members.push(member);
    this.records += member.records.length;
    this.bytes += member.bytes;
  }

  get size(): number {
    return this.members.length;
  }

  /** When the oldest waiting member arrived (its linger decides when a partial group goes). */
  get oldestArrival(): number | undefined {
    return this.members[0]?.arrivedAt;
  }

  /** Enough waits for a whole group: waiting longer cannot make the next group bigger. */
  full(): boolean {
    return this.records >= this.knobs.maxRecords || BATCH_HEADER_BYTES + this.bytes >= this.knobs.maxBytes;
  }

  /** Removes and returns the next group (empty when nothing waits). */
  take(): Array<PendingMember<T>> {
    let records = 0;
    let bytes = BATCH_HEADER_BYTES;
    let n = 0;
    for (const member of this.members) {
      const fits =
        records + member.records.length <= this.knobs.maxRecords && bytes + member.bytes <= this.knobs.maxBytes;
      if (n > 0 && !fits) break;
      records += member.records.length;
      bytes += member.bytes;
      n++;
    }
    const group = this.members.splice(0, n);
    this.records -= records;
    this.bytes -= bytes - BATCH_HEADER_BYTES;
    return group;
  }

  /** Removes every waiting member (a halted producer answers them itself). */
  drain(): Array<PendingMember<T>> {
    const all = this.members.splice(0);
    this.records = 0;
    this.bytes = 0;
    return all;
  }
}
