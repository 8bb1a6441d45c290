import { ValidationError } from '../domain/errors.js';
import { validateAttemptId, validateFence, validateLane, type LaneRef } from '../domain/stream.js';
import type { Fence } from '../domain/fence.js';

/** What every append step after WriteWal is addressed by: the lane, the attempt, the session. */
export interface AttemptRef extends LaneRef {
  attemptId: string;
  session: Fence;
}

/** A WAL object and the range it is bound to (its metadata: `walBindingOf`). */
export interface WalRef {
  walKey: string;
  walSha256: string;
  walSize: number;
  recordCount: number;
  /** The only offset this batch can commit at. */
  start: number;
  /** The owner session epoch it was written under. */
  fenceEpoch: number;
}

/** Steps that act only on durable evidence (index, generation 0, resolve) need no session. */
export function validateAttempt(input: unknown): LaneRef & { attemptId: string } {
  return { ...validateLane(input), attemptId: validateAttemptId((input as { attemptId?: unknown }).attemptId) };
}

export function validateAttemptRef(input: unknown): AttemptRef {
  const lane = validateLane(input);
  const v = input as { attemptId?: unknown; session?: unknown };
  return { ...lane, attemptId: validateAttemptId(v.attemptId), session: validateFence(v.session) };
}

/** Records arrive base64-encoded (state machine input is JSON). */
export function decodeRecords(input: unknown): Uint8Array[] {
  const records = (input as { records?: unknown }).records;
  if (!Array.isArray(records) || records.length === 0 || !records.every((r) => typeof r === 'string')) {
    throw new ValidationError('stream.invalid_records', 'records must be a non-empty array of base64 strings');
  }
  return records.map((r) => new Uint8Array(Buffer.from(r as string, 'base64')));
}

export function validateWalRef(input: unknown): WalRef {
  const w = (input as { wal?: unknown }).wal as Partial<WalRef> | undefined;
  const ints = [w?.walSize, w?.recordCount, w?.start, w?.fenceEpoch];
  if (
    !w ||
    typeof w.walKey !== 'string' ||
    typeof w.walSha256 !== 'string' ||
    !ints.every((n) => Number.isSafeInteger(n) && (n as number) >= 0)
  ) {
    throw new ValidationError(
      'stream.invalid_wal_ref',
      'wal must be {walKey, walSha256, walSize, recordCount, start, fenceEpoch}',
    );
  }
  return {
    walKey: w.walKey,
    walSha256: w.walSha256,
    walSize: w.walSize as number,
    recordCount: w.recordCount as number,
    start: w.start as number,
    fenceEpoch: w.fenceEpoch as number,
  };
}

/** The head version a step may carry from the one before it (the writer's last CAS or load). */
export function carriedVersion(input: unknown): number | undefined {
  const v = (input as { expected?: { version?: unknown } | null }).expected?.version;
  return Number.isSafeInteger(v) ? (v as number) : undefined;
}

/** The lane's attempt window (seconds) carried beside the version: it is fixed at create, so carrying it is as good as reading it. */
export function carriedWindow(input: unknown): number | undefined {
  const v = (input as { expected?: { attemptWindowSeconds?: unknown } | null }).expected?.attemptWindowSeconds;
  return Number.isSafeInteger(v) && (v as number) > 0 ? (v as number) : undefined;
}
