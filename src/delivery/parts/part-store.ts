// Over ~300 lines since the formatter wrapped it at 120 columns (216 lines before), kept whole:
// one job: the part heads and receipt batches in the authority (parse, read, claim, record), one
// item layout.
import {
  batchDigestOf,
  emptyPartHead,
  nextPartHead,
  type ChunkReceiptFact,
  type PartHead,
  type ReceiptBatch,
} from '../../domain/delivery/part-receipts.js';
import type { PartDescriptor } from '../../domain/delivery/parts.js';
import { IdentityConflictError, OutcomeUnknownError, EffectFailedError } from '../../domain/errors.js';
import type { AuthorityItem, TransactionLeg } from '../../ports/authority.js';
import type { Fence } from '../../domain/fence.js';
import type { Ports } from '../../ports/index.js';
import { assertCustody, type CustodyRecord } from '../custody.js';
import { DELIVERY_CUT_POINTS } from '../cut-points.js';
import { inconsistent } from '../journal/errors.js';
import { custodyGuardLeg, submitRound } from '../journal/journaled-write.js';
import { deliveryKeys } from '../journal/keys.js';
import { read, readInvocation, type InvocationRecord } from '../journal/records.js';

/**
 * The part items (keys in journal/keys.ts): one head per part and one item per batch of
 * 16 receipts. A batch is written in ONE transaction — the batch item (must be absent),
 * the head (expected version, or absent for the first batch) and the custody fence
 * (a ConditionCheck: a zombie of an older epoch writes nothing) — at
 * `delivery.part.receipt`. Parts never touch the invocation item, so a Distributed Map's
 * parallel parts do not contend on it.
 *
 * Exactly once: the batch key is deterministic (part, k), so a retry after a lost
 * response or a crash finds its own batch by exact key and digest; a different batch
 * under the key is contradicting evidence (`delivery.source_changed`: the source no
 * longer yields the chunks it yielded), never overwritten.
 */

export type StoredHead = PartHead & { version: number };

const HEX64 = /^[0-9a-f]{64}$/;
const isNat = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;

function parseReceipt(v: unknown): ChunkReceiptFact | undefined {
  const r = v as Partial<ChunkReceiptFact> | null;
  if (
    !r ||
    typeof r !== 'object' ||
    !isNat(r.seq) ||
    !isNat(r.rows) ||
    !isNat(r.bytes) ||
    typeof r.sha256 !== 'string' ||
    !HEX64.test(r.sha256) ||
    typeof r.key !== 'string'
  )
    return undefined;
  return { seq: r.seq, rows: r.rows, bytes: r.bytes, sha256: r.sha256, key: r.key };
}

export function parseHead(item: AuthorityItem, invocationId: string): StoredHead {
  const bad = () => inconsistent('a part head is malformed');
  const i = item as Record<string, unknown>;
  if (
    i.invocationId !== invocationId ||
    !isNat(i.part) ||
    !isNat(i.chunks) ||
    !isNat(i.rows) ||
    !isNat(i.bytes) ||
    !isNat(i.plannedRows)
  )
    throw bad();
  if (
    typeof i.start !== 'string' ||
    typeof i.end !== 'string' ||
    typeof i.digest !== 'string' ||
    !HEX64.test(i.digest) ||
    typeof i.eof !== 'boolean'
  )
    throw bad();
  const head: StoredHead = {
    invocationId,
    part: i.part,
    start: i.start,
    end: i.end,
    plannedRows: i.plannedRows,
    chunks: i.chunks,
    rows: i.rows,
    bytes: i.bytes,
    digest: i.digest,
    eof: i.eof,
    version: item.version,
  };
  const last = i.last as { seq?: unknown; key?: unknown; sha256?: unknown } | undefined;
  if (last !== undefined) {
    if (!isNat(last.seq) || typeof last.key !== 'string' || typeof last.sha256 !== 'string' || !HEX64.test(last.sha256))
      throw bad();
    head.last = { seq: last.seq, key: last.key, sha256: last.sha256 };
  }
  return head;
}

export function parseBatch(item: AuthorityItem, invocationId: string): ReceiptBatch & { digest: string } {
  const i = item as Record<string, unknown>;
  const receipts = Array.isArray(i.receipts) ? i.receipts.map(parseReceipt) : undefined;
  if (
    i.invocationId !== invocationId ||
    !isNat(i.part) ||
    !isNat(i.batch) ||
    typeof i.eof !== 'boolean' ||
    !receipts ||
    receipts.some((r) => !r) ||
    typeof i.digest !== 'string'
  ) {
    throw inconsistent('a part receipt batch is malformed');
  }
  const batch: ReceiptBatch = { part: i.part, batch: i.batch, eof: i.eof, receipts: receipts as ChunkReceiptFact[] };
  if (batchDigestOf(batch) !== i.digest)
    throw inconsistent(`receipt batch ${i.batch} of part ${i.part} does not match its digest`);
  return { ...batch, digest: i.digest };
}

export async function readHead(ports: Ports, invocationId: string, part: number): Promise<StoredHead | undefined> {
  const item = await read(() => ports.authority.get(deliveryKeys.part(invocationId, part)));
  return item ? parseHead(item, invocationId) : undefined;
}

/** Every item of the invocation's parts partition under `prefix`, page by page. */
async function queryAll(ports: Ports, invocationId: string, prefix: string): Promise<AuthorityItem[]> {
  const out: AuthorityItem[] = [];
  for (let after: string | undefined; ;) {
    const page = await read(() =>
      ports.authority.query(deliveryKeys.partsOf(invocationId), prefix, {
        limit: 500,
        ...(after ? { startAfterSk: after } : {}),
      }),
    );
    out.push(...page);
    if (page.length < 500) return out;
    after = page.at(-1)?.sk;
  }
}

/** All part heads of an invocation, by part. */
export async function listHeads(ports: Ports, invocationId: string): Promise<StoredHead[]> {
  return (await queryAll(ports, invocationId, 'part#'))
    .map((item) => parseHead(item, invocationId))
    .sort((a, b) => a.part - b.part);
}

/** The receipt batches of one part, by batch. */
export async function listBatches(ports: Ports, invocationId: string, part: number): Promise<ReceiptBatch[]> {
  const prefix = deliveryKeys.batch(invocationId, part, 0).sk.replace(/#0+$/, '#');
  return (await queryAll(ports, invocationId, prefix))
    .map((item) => parseBatch(item, invocationId))
    .sort((a, b) => a.batch - b.batch);
}

/** Every journaled chunk receipt of an invocation, by seq (audits and tests; recovery reads them part by part). */
export async function listReceipts(ports: Ports, invocationId: string): Promise<ChunkReceiptFact[]> {
  const batches = (await queryAll(ports, invocationId, 'batch#')).map((item) => parseBatch(item, invocationId));
  return batches.flatMap((b) => b.receipts).sort((a, b) => a.seq - b.seq);
}

const MAX_ROUNDS = 6;

/** A part as its item step starts it: the head to go on from, and the invocation it was proved current against. */
export interface ClaimedPart {
  head: StoredHead;
  /** The invocation record, re-read only when the carried one was not current. */
  invocation: InvocationRecord;
}

/**
 * Starts (or finds) a part without reading anything first: ONE transaction at
 * `delivery.part.claim` puts the part's empty head (must be absent), checks the
 * invocation is still at the version the step carries (so its state — WRITING_UNKNOWN —
 * and its plan and stage are current: parts never write the invocation) and that the
 * fence holds custody. A head that exists comes back with the CONFLICT (the part was
 * started before: a retry, a redrive) and the part goes on from it; a carried invocation
 * that is not current is read again and the claim repeated. A part whose head exists is
 * never loaded before its head is known, so a part at EOF is never touched again.
 */
export async function claimPart(
  ports: Ports,
  request: { invocation: InvocationRecord; descriptor: PartDescriptor; custody: CustodyRecord & { fence: Fence } },
): Promise<ClaimedPart> {
  const { descriptor, custody } = request;
  let invocation = request.invocation;
  const ref = { targetId: invocation.targetId, invocationId: invocation.invocationId };
  const key = deliveryKeys.part(ref.invocationId, descriptor.part);
  let unknown: string | undefined;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const empty = emptyPartHead(ref.invocationId, descriptor);
    const legs: TransactionLeg[] = [
      { kind: 'put', item: { ...key, ...empty, updatedAt: ports.clock.now().toISOString() }, expect: 'absent' },
      {
        kind: 'check',
        key: deliveryKeys.invocation(ref.targetId, ref.invocationId),
        expect: { version: invocation.version },
      },
      custodyGuardLeg(custody),
    ];
    const outcome = await submitRound(ports, DELIVERY_CUT_POINTS.partClaim, legs, round);
    if (outcome.status === 'APPLIED') return { head: { ...empty, version: 1 }, invocation };
    if (outcome.status === 'UNKNOWN') {
      unknown = outcome.reason;
      continue;
    }
    const conflict = (leg: number) => outcome.conflicts.find((c) => c.leg === leg);
    if (conflict(2)) await assertFenceStill(ports, custody);
    if (conflict(1)) {
      invocation = await readInvocation(ports, ref);
      continue;
    }
    const current = conflict(0)?.current;
    // The head exists and the invocation is current (its check passed in the same transaction).
    if (current) return { head: parseHead(current, ref.invocationId), invocation };
  }
  if (unknown !== undefined)
    throw new OutcomeUnknownError(
      DELIVERY_CUT_POINTS.partClaim,
      `the claim of part ${descriptor.part} is still unknown (${unknown})`,
    );
  throw new EffectFailedError(
    DELIVERY_CUT_POINTS.partClaim,
    `the claim of part ${descriptor.part} kept conflicting and was not applied`,
  );
}

/**
 * Journals one batch of a part under the caller's custody (see the file comment). Returns
 * the head after the batch, whether this call or an earlier lost one wrote it.
 */
export async function recordBatch(
  ports: Ports,
  request: { invocationId: string; head: StoredHead; batch: ReceiptBatch; custody: CustodyRecord & { fence: Fence } },
): Promise<StoredHead> {
  const { invocationId, batch, custody } = request;
  const batchKey = deliveryKeys.batch(invocationId, batch.part, batch.batch);
  const digest = batchDigestOf(batch);
  let head = request.head;
  let unknown: string | undefined;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    // Round 0 submits on what the caller read; a lost or refused round finds its own batch first.
    if (round > 0 && (await findBatch(ports, invocationId, batchKey, digest))) {
      return (await readHead(ports, invocationId, batch.part)) ?? fail('a part batch is journaled without its head');
    }
    const next = nextPartHead(head, batch);
    const at = ports.clock.now().toISOString();
    const { version: _v, ...fields } = next as StoredHead;
    const legs: TransactionLeg[] = [
      {
        kind: 'put',
        item: {
          ...batchKey,
          invocationId,
          part: batch.part,
          batch: batch.batch,
          eof: batch.eof,
          receipts: batch.receipts,
          digest,
          at,
        },
        expect: 'absent',
      },
      {
        kind: 'update',
        key: deliveryKeys.part(invocationId, batch.part),
        expect: { version: head.version },
        set: { ...fields, updatedAt: at },
      },
      custodyGuardLeg(custody),
    ];
    const outcome = await submitRound(ports, DELIVERY_CUT_POINTS.partReceipt, legs, round);
    if (outcome.status === 'APPLIED') return { ...next, version: head.version + 1 };
    if (outcome.status === 'UNKNOWN') unknown = outcome.reason;
    else if (outcome.conflicts.some((c) => c.leg === 2)) await assertFenceStill(ports, custody);
    // Reload: the head may have moved (a duplicate of this part's Lambda wrote this batch).
    head = (await readHead(ports, invocationId, batch.part)) ?? request.head;
  }
  if (await findBatch(ports, invocationId, batchKey, digest))
    return (await readHead(ports, invocationId, batch.part)) ?? fail('a part batch is journaled without its head');
  if (unknown !== undefined)
    throw new OutcomeUnknownError(
      DELIVERY_CUT_POINTS.partReceipt,
      `batch ${batch.batch} of part ${batch.part} is still unknown (${unknown})`,
    );
  throw new EffectFailedError(
    DELIVERY_CUT_POINTS.partReceipt,
    `batch ${batch.batch} of part ${batch.part} kept conflicting and was not applied`,
  );
}

async function findBatch(
  ports: Ports,
  invocationId: string,
  key: { pk: string; sk: string },
  digest: string,
): Promise<boolean> {
  const item = await read(() => ports.authority.get(key));
  if (!item) return false;
  if (parseBatch(item, invocationId).digest !== digest) {
    throw new IdentityConflictError(
      'delivery.source_changed',
      'a journaled receipt batch of this part differs from the chunks the source yields now; nothing was overwritten',
    );
  }
  return true;
}

async function assertFenceStill(ports: Ports, custody: CustodyRecord & { fence: Fence }): Promise<void> {
  await assertCustody(ports, custody.targetId, custody.fence);
}

function fail(message: string): never {
  throw inconsistent(message);
}
