import { CutpointError, OutcomeUnknownError, ValidationError } from '../../domain/errors.js';
import { laneKeys, validateLane, type CommitRecord, type LaneRef } from '../../domain/stream.js';
import type { Ports } from '../../ports/index.js';
import { STREAM_CUT_POINTS } from '../cut-points.js';
import { readCopy } from './candidates.js';
import { committedCompaction, committedGen0 } from './evidence.js';
import {
  QuarantineIdentityMismatchError,
  QuarantineNotFoundError,
  QuarantineStillBadError,
  QUARANTINE_PAGE,
  quarantineItems,
  type Candidate,
  type QuarantineItem,
} from './quarantine.js';

export interface ReleaseResult extends LaneRef {
  objectKey: string;
  copy: Candidate['copy'];
  start: number;
  end: number;
  sha256: string;
  size: number;
  released: true;
}

/** The quarantine item changed between the release's load and its delete: reload and decide again. */
export class QuarantineChangedError extends CutpointError {
  constructor(lane: LaneRef, objectKey: string) {
    super(
      'Stream.QuarantineChanged',
      'stream.quarantine_changed',
      `${lane.stream}/${lane.partition}: the quarantine item of ${objectKey} changed during the release; run it again`,
    );
  }
}

const MAX_OBJECT_KEY = 1024;
const DELETE_ATTEMPTS = 2;

/**
 * Releases a quarantined copy after re-verifying it by exact identity (docs/rules.md#quarantine;
 * docs/rules.md#exact-identity): the item's expected SHA-256 (and size, when it
 * recorded one), copy and range must be what the authority evidence says this copy is —
 * the commit record for the WAL object, the committed generation 0 of exactly that commit
 * for gen0, the `compaction#` record of exactly that run and its COMMITTED generation for
 * a compacted copy — and the object's bytes must hash to it, have its size and decode to the
 * range's record count. Only then is the exact item (its version) deleted, at
 * `stream.read.quarantine-release`; a lost answer is resolved by reloading it. Anything still bad is
 * refused (stream.quarantine_still_bad / stream.quarantine_identity_mismatch) and the item
 * stays. Release never writes or deletes bytes.
 */
export async function releaseQuarantine(input: unknown, ports: Ports): Promise<ReleaseResult> {
  const lane = validateLane(input);
  const objectKey = validateObjectKey((input as { objectKey?: unknown }).objectKey);
  const key = laneKeys.quarantine(lane, objectKey);
  const item = (await ports.authority.get(key)) as QuarantineItem | undefined;
  if (!item) throw new QuarantineNotFoundError(lane, objectKey);

  const identity = await evidenceOf(ports, lane, item);
  const verdict = await readCopy(ports, item, identity);
  if ('reason' in verdict) throw new QuarantineStillBadError(lane, objectKey, verdict.reason);

  const result: ReleaseResult = {
    ...lane,
    objectKey,
    copy: item.copy,
    start: item.start,
    end: item.end,
    sha256: identity.sha256,
    size: identity.size!,
    released: true,
  };
  const cut = STREAM_CUT_POINTS.quarantineRelease;
  let reason = '';
  for (let attempt = 0; attempt < DELETE_ATTEMPTS; attempt++) {
    const outcome = await ports.authority.delete(cut, key, { version: item.version });
    if (outcome.status === 'APPLIED') return result;
    // CONFLICT carries the current item; UNKNOWN is resolved by reloading the exact item.
    const current = outcome.status === 'CONFLICT' ? outcome.current : await ports.authority.get(key);
    if (outcome.status === 'UNKNOWN') reason = outcome.reason;
    if (!current) return result; // gone: our delete (a lost answer) or a concurrent release of it
    if (current.version !== item.version) throw new QuarantineChangedError(lane, objectKey);
    // The exact item is still there: the delete did not land; its condition makes another safe.
  }
  throw new OutcomeUnknownError(cut, `${cut}: release of ${objectKey} still unresolved (${reason})`);
}

/**
 * What the authority evidence says the quarantined copy is, compared field by field with
 * the item: a copy whose item disagrees with the evidence is not released. A range copy's
 * evidence is its commit record (WAL) or the committed generation 0 of exactly that commit;
 * a compacted copy's is the `compaction#` record of exactly its run and that record's
 * COMMITTED generation (committedCompaction).
 */
async function evidenceOf(ports: Ports, lane: LaneRef, item: QuarantineItem): Promise<Candidate & { size: number }> {
  const refuse = (detail: string) => new QuarantineIdentityMismatchError(lane, item.objectKey, detail);
  if (!Number.isInteger(item.start) || !Number.isInteger(item.end) || !COPIES.includes(item.copy)) {
    throw refuse('the item names no copy and range');
  }
  const range = `[${item.start}, ${item.end})`;
  let evidence: { key: string; sha256: string; size: number } | undefined;
  if (item.copy === 'compacted') {
    evidence = await committedCompaction(ports, lane, item.start, item.end);
    if (!evidence) throw refuse(`no committed compaction of exactly ${range}`);
  } else {
    const commit = (await ports.authority.get(laneKeys.commit(lane, item.end))) as unknown as CommitRecord | undefined;
    if (!commit || commit.start !== item.start) throw refuse(`no commit record for ${range}`);
    evidence =
      item.copy === 'wal'
        ? { key: commit.walKey, sha256: commit.walSha256, size: commit.walSize }
        : await committedGen0(ports, lane, commit);
    if (!evidence) throw refuse(`no committed generation 0 of ${range}`);
  }
  if (evidence.key !== item.objectKey) throw refuse(`the evidence names ${evidence.key}`);
  if (evidence.sha256 !== item.expectedSha256)
    throw refuse(`expected sha256 ${item.expectedSha256} is not the evidence's ${evidence.sha256}`);
  if (item.expectedSize !== undefined && item.expectedSize !== evidence.size)
    throw refuse(`expected size ${item.expectedSize} is not the evidence's ${evidence.size}`);
  return { copy: item.copy, ...evidence };
}

const COPIES: ReadonlyArray<Candidate['copy']> = ['gen0', 'wal', 'compacted'];

export interface QuarantineListing extends LaneRef {
  items: Array<{
    key: string;
    reason: string;
    at: string;
    copy: string;
    start: number;
    end: number;
    expectedSha256: string;
  }>;
}

/** Every quarantine item of a lane (key, reason, when, and the identity it judged). */
export async function listQuarantine(input: unknown, ports: Ports): Promise<QuarantineListing> {
  const lane = validateLane(input);
  const items: QuarantineListing['items'] = [];
  for (let after: string | undefined; ;) {
    const page = await quarantineItems(ports, lane, after === undefined ? {} : { startAfterKey: after });
    for (const i of page)
      items.push({
        key: i.objectKey,
        reason: i.reason,
        at: i.at,
        copy: i.copy,
        start: i.start,
        end: i.end,
        expectedSha256: i.expectedSha256,
      });
    if (page.length === 0 || page.length < QUARANTINE_PAGE) return { ...lane, items };
    after = page.at(-1)!.objectKey;
  }
}

function validateObjectKey(value: unknown): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_OBJECT_KEY) {
    throw new ValidationError(
      'stream.invalid_object_key',
      `objectKey must be a non-empty string of at most ${MAX_OBJECT_KEY} characters`,
    );
  }
  return value;
}
