import { partProblems, partsDigest } from '../../domain/delivery/part-receipts.js';
import { MAX_CHUNKS_PER_PART, SEQ_LIMIT, seqRangeOf } from '../../domain/delivery/parts.js';
import { forEachConcurrently } from '../../engine/concurrently.js';
import type { DeliveryDeps } from '../deps.js';
import type { PartsFact } from '../journal/facts.js';
import type { InvocationRecord } from '../journal/records.js';
import { stagingRefOf } from '../steps/common.js';
import { readPlan } from '../steps/plan-parts.js';
import { listBatches, listHeads } from './part-store.js';

/** Parts observed at once: each is one range observation of the stage and one receipt query. */
const PARALLEL = 8;

/**
 * What the parts' receipts prove ("exact receipts and digest"): every planned part at
 * EOF, its receipt batches adding up to its head, and the stage holding exactly the
 * receipts' rows per seq — observed part by part over each part's seq range (an index
 * range scan per part, never one GROUP BY over the whole window), plus one observation
 * that no seq beyond the last part's range holds rows. Read-only. `summary` is what
 * VERIFIED_EOF records (src/delivery/journal/facts.ts `PartsFact`). A planned part short
 * of EOF means the writer has not finished: `unfinished`, and the target is not read.
 */
export async function verifyParts(
  deps: DeliveryDeps,
  record: InvocationRecord,
): Promise<{ unfinished: true } | { unfinished: false; problems: string[]; summary: PartsFact }> {
  const plan = await readPlan(deps, record);
  const heads = await listHeads(deps.ports, record.invocationId);
  const atEof = new Set(heads.filter((h) => h.eof).map((h) => h.part));
  if (plan.some((d) => !atEof.has(d.part))) return { unfinished: true };
  const staging = stagingRefOf(record);
  const problems: string[] = [];
  const extra = heads.filter((h) => h.part >= plan.length);
  if (extra.length > 0) problems.push(`${extra.length} part heads beyond the plan's ${plan.length} parts`);
  const byPart = new Map(heads.map((h) => [h.part, h]));
  await forEachConcurrently(plan, PARALLEL, async (descriptor) => {
    const head = byPart.get(descriptor.part);
    if (!head?.eof) {
      problems.push(...partProblems(descriptor, head, [], []));
      return;
    }
    const [batches, observed] = await Promise.all([
      listBatches(deps.ports, record.invocationId, descriptor.part),
      deps.target.observeChunks(staging, seqRangeOf(descriptor.part)),
    ]);
    problems.push(...partProblems(descriptor, head, batches, observed));
  });
  const beyond = await deps.target.observeChunks(staging, { from: plan.length * MAX_CHUNKS_PER_PART, to: SEQ_LIMIT });
  if (beyond.length > 0) problems.push('the stage holds rows under seqs no part owns');
  const ordered = plan.map((d) => byPart.get(d.part)).filter((h) => h !== undefined);
  return {
    unfinished: false,
    problems: problems.sort(),
    summary: {
      parts: plan.length,
      chunks: ordered.reduce((n, h) => n + h.chunks, 0),
      rows: ordered.reduce((n, h) => n + h.rows, 0),
      bytes: ordered.reduce((n, h) => n + h.bytes, 0),
      digest: partsDigest(ordered),
    },
  };
}

/** What reconcile's bounded observation of an unfinished writer proved (`observePartial`). */
export interface PartialObservation {
  /** Everything the stage holds is explained by the journal (below); false → an incident. */
  explained: boolean;
  /**
   * Continuing is safe (journal-states.ts RecoveryFacts.continuable): explained, every
   * journaled chunk observed with exactly its receipt's rows, and `unfinishedParts` > 0.
   */
  continuable?: { unfinishedParts: number; rowsProved: number };
}

/**
 * Reconcile's bounded observation of an unfinished writer. `explained` when everything the
 * stage holds is explained — a journaled chunk with exactly its receipt's rows, or a chunk
 * of a planned part after that part's last journaled one (loaded, its receipt batch not
 * yet journaled: the writer stopped between a load and its batch; a continue loads that
 * seq again, replacing its rows). A seq outside every planned part, or a journaled chunk
 * holding other rows than its receipt, is not explained. `continuable` when, besides, no
 * journaled chunk is missing from the stage and some planned part is short of EOF: the
 * unfinished parts can go on after their last journaled chunk and VerifyEof can then
 * prove the whole window. Observed part by part like `verifyParts` (each part's batches
 * and an index range of the stage, `PARALLEL` at once), then once beyond the plan's ranges.
 */
export async function observePartial(deps: DeliveryDeps, record: InvocationRecord): Promise<PartialObservation> {
  const parts = record.facts.plan?.parts ?? 0;
  const staging = stagingRefOf(record);
  const heads = await listHeads(deps.ports, record.invocationId);
  const journaled = new Map(heads.map((h) => [h.part, h.chunks]));
  let explained = true;
  let complete = true;
  await forEachConcurrently(
    Array.from({ length: parts }, (_, part) => part),
    PARALLEL,
    async (part) => {
      if (!explained) return;
      const range = seqRangeOf(part);
      const [batches, observed] = await Promise.all([
        listBatches(deps.ports, record.invocationId, part),
        deps.target.observeChunks(staging, range),
      ]);
      const receipts = batches.flatMap((b) => b.receipts);
      const rowsBySeq = new Map(receipts.map((r) => [r.seq, r.rows]));
      const ok = observed.every((o) => {
        const recorded = rowsBySeq.get(o.seq);
        return recorded !== undefined ? recorded === o.rows : o.seq - range.from >= (journaled.get(part) ?? 0);
      });
      if (!ok) explained = false;
      const seen = new Set(observed.map((o) => o.seq));
      if (receipts.some((r) => r.rows > 0 && !seen.has(r.seq))) complete = false;
    },
  );
  if (!explained) return { explained };
  const beyond = await deps.target.observeChunks(staging, { from: parts * MAX_CHUNKS_PER_PART, to: SEQ_LIMIT });
  if (beyond.length > 0) return { explained: false };
  const atEof = new Set(heads.filter((h) => h.eof && h.part < parts).map((h) => h.part));
  const unfinishedParts = parts - atEof.size;
  if (!complete || unfinishedParts === 0) return { explained };
  const rowsProved = heads.filter((h) => h.part < parts).reduce((n, h) => n + h.rows, 0);
  return { explained, continuable: { unfinishedParts, rowsProved } };
}
