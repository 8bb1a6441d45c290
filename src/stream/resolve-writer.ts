import { OutcomeUnknownError } from '../domain/errors.js';
import { ResolveInconsistentError } from '../domain/stream-errors.js';
import { forEachConcurrently } from '../engine/concurrently.js';
import {
  laneKeys,
  validateLane,
  walBindingOf,
  walPrefixOfAttempts,
  type AppendOutcome,
  type LaneRef,
} from '../domain/stream.js';
import type { Ports } from '../ports/index.js';
import type { WalRef } from './append-input.js';
import { commitAtEnd, namesAttempt } from './append/attempt-evidence.js';
import {
  mintOrderOf,
  releaseWriterSlot,
  validateWriterId,
  writerAttemptPrefix,
  writerOfAttempt,
} from './append/writer-slot.js';
import { STREAM_CUT_POINTS } from './cut-points.js';
import { loadHead } from './lane-store.js';
import { knownCommitted, uncommittedOutcome } from './outcomes.js';
import { provenCommitted, unsuspend } from './resolve.js';
import { spendAttempt } from './spend-attempt.js';

export interface WriterResolution extends LaneRef {
  writerId: string;
  /** Every attempt of the writer that left a WAL object, in the order it minted them: KNOWN_COMMITTED with its range, or KNOWN_NOT_COMMITTED. */
  attempts: AppendOutcome[];
  /** The lane no longer names the writer (this call released it, or it already had been). */
  released: true;
}

/**
 * `stream resolve --writer` (docs/stream-log.md "The stream log"): settles every attempt of a LaneWriter
 * that died holding its lane's writer slot, then releases the slot.
 * 1. The slot is marked as being resolved (`resolvingSince`, one update at the version read,
 *    cut point stream.resolve.fence): the version bump makes every head CAS of the writer
 *    still in flight unable to apply, and from then on no attempt of it may send one (its
 *    re-decisions are refused, writer-slot.ts `writerAgainst`). So the writer's committed
 *    attempts are fixed from here, and each one's WAL object was written before its CAS.
 * 2. One LIST of `wal/<stream>/<partition>/w<writer>.` finds the writer's WAL objects; each
 *    attempt is proven committed (the commit record at its bound end names it) or spent
 *    (spent marker + head version bump: a lost CAS can never apply later) — the same spend
 *    as `stream resolve --attempt`, and a suspension one of them holds is lifted. A
 *    committed attempt costs one HEAD and one GetItem (16 in flight); a commit the head has
 *    not reached contradicts itself (Stream.ResolveInconsistent, the slot stays held).
 * 3. The slot is released, conditioned on the head version read after all that
 *    (stream.append.writer-release).
 * Interrupted anywhere, the slot stays held (marked) and a re-run does the same again: the
 * spends are idempotent, a committed attempt is reported committed again. A lane that does
 * not name the writer (released already, or never claimed) is still settled the same way.
 */
export async function resolveWriter(input: unknown, ports: Ports): Promise<WriterResolution> {
  const lane = validateLane(input);
  const writerId = validateWriterId((input as { writerId?: unknown }).writerId);
  for (let round = 0; round < 3; round++) {
    await fenceWriter(ports, lane, writerId);
    const attempts = await settleAttempts(ports, lane, writerId);
    let head = await loadHead(ports, lane);
    if (head.suspendedBy !== undefined && writerOfAttempt(head.suspendedBy) === writerId) {
      await unsuspend(ports, lane, head.suspendedBy);
      head = await loadHead(ports, lane);
    }
    if (head.writer?.id !== writerId) return { ...lane, writerId, attempts, released: true };
    // Left false only when the writer claimed the lane again since the mark (a live writer): settle again.
    if (
      await releaseWriterSlot(
        ports,
        lane,
        writerId,
        'resolve',
        head.writer.resolvingSince === undefined ? undefined : head.version,
      )
    ) {
      return { ...lane, writerId, attempts, released: true };
    }
  }
  throw new OutcomeUnknownError(
    STREAM_CUT_POINTS.writerRelease,
    `writer ${writerId} of ${lane.stream}/${lane.partition} kept claiming the lane again while it was resolved`,
  );
}

/**
 * Each attempt of the writer that left a WAL object: proven committed, or spent. A writer
 * that ran long has many committed attempts and a few at its end that may not be: the
 * commit records are read in parallel (one GetItem per attempt), then the rest are spent
 * one at a time (each spend bumps the head version; concurrent ones would only conflict).
 */
async function settleAttempts(ports: Ports, lane: LaneRef, writerId: string): Promise<AppendOutcome[]> {
  const listed = await writerWals(ports, lane, writerId);
  // Read after the mark and the listing: every commit of the writer is at or below this end.
  const head = await loadHead(ports, lane);
  const outcomes: Array<AppendOutcome | undefined> = [];
  await forEachConcurrently(listed, READS_IN_FLIGHT, async ([attemptId, wals], i) => {
    for (const wal of wals) {
      const commit = await commitAtEnd(ports, lane, wal);
      if (!namesAttempt(commit, attemptId, wal)) continue;
      if (head.committedEnd < commit!.end)
        throw new ResolveInconsistentError(
          attemptId,
          `head end ${head.committedEnd} is behind the committed range end ${commit!.end}`,
        );
      outcomes[i] = knownCommitted({ ...commit!, recordCount: commit!.end - commit!.start });
      return;
    }
  });
  for (const [i, [attemptId, wals]] of listed.entries()) {
    if (outcomes[i]) continue;
    const spent = await spendAttempt(
      ports,
      lane,
      attemptId,
      `resolved with writer ${writerId}: the head CAS never applied`,
      STREAM_CUT_POINTS.resolveFence,
      wals,
    );
    outcomes[i] =
      spent.status === 'COMMITTED'
        ? await provenCommitted(ports, lane, spent.commit)
        : uncommittedOutcome(
            'KNOWN_NOT_COMMITTED',
            { ...lane, attemptId },
            spent.marker.recordCount,
            spent.marker.reason,
          );
  }
  return outcomes as AppendOutcome[];
}

/** Object HEADs and commit-record reads in flight at once. */
const READS_IN_FLIGHT = 16;

/** Marks the slot as being resolved, if it names the writer and is not marked yet. */
async function fenceWriter(ports: Ports, lane: LaneRef, writerId: string): Promise<void> {
  const cut = STREAM_CUT_POINTS.resolveFence;
  for (let round = 0; round < 4; round++) {
    const head = await loadHead(ports, lane);
    if (head.writer?.id !== writerId || head.writer.resolvingSince !== undefined) return;
    const outcome = await ports.authority.update(
      cut,
      laneKeys.head(lane),
      { version: head.version },
      {
        writer: { ...head.writer, resolvingSince: ports.clock.now().toISOString() },
      },
    );
    if (outcome.status === 'APPLIED') return;
    // CONFLICT or UNKNOWN: the next round reloads; a mark that landed is there.
  }
  throw new OutcomeUnknownError(
    cut,
    `${cut}: marking writer ${writerId} of ${lane.stream}/${lane.partition} as being resolved did not settle`,
  );
}

/** The writer's WAL objects by attempt, from one LIST, in the order the writer minted the attempts. */
async function writerWals(ports: Ports, lane: LaneRef, writerId: string): Promise<Array<[string, WalRef[]]>> {
  const keys = await ports.objects.list(walPrefixOfAttempts(lane, writerAttemptPrefix(writerId)));
  const found: Array<{ attemptId: string; wal: WalRef } | undefined> = [];
  await forEachConcurrently(keys, READS_IN_FLIGHT, async (key, i) => {
    const head = await ports.objects.head(key);
    const binding = head ? walBindingOf(head.metadata) : undefined;
    if (!head || !binding || writerOfAttempt(binding.attemptId) !== writerId || !key.includes(`/${binding.attemptId}/`))
      return;
    const { walSha256, recordCount, start, fenceEpoch } = binding;
    found[i] = {
      attemptId: binding.attemptId,
      wal: { walKey: key, walSha256, walSize: head.size, recordCount, start, fenceEpoch },
    };
  });
  const byAttempt = new Map<string, WalRef[]>();
  for (const one of found) if (one) byAttempt.set(one.attemptId, [...(byAttempt.get(one.attemptId) ?? []), one.wal]);
  return [...byAttempt].sort(([a], [b]) => {
    const [ea, sa] = mintOrderOf(a);
    const [eb, sb] = mintOrderOf(b);
    return ea - eb || sa - sb;
  });
}
