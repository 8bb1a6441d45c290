import { OutcomeUnknownError } from '../../domain/errors.js';
import type { ObjectHead } from '../../ports/objects.js';
import type { Ports } from '../../ports/index.js';
import { GC_CUT_POINTS } from './cut-points.js';
import type { DeleteJournal, LifecycleRoot } from './model.js';
import { keepCommittedEvidence } from './attempt-record.js';
import { loadRoot, moveRoot } from './roots.js';
import { eachOfPage, runOf, type GcRun } from './state.js';

const DELETE_ROUNDS = 3;

/**
 * Delete, then finalize, each DELETING root of the page from its sealed journal.
 * - The root is reloaded and must still be DELETING under the same epoch and delete id
 *   (exact identity); anything else is left alone.
 * - A committed attempt's WAL object is deleted only after its committed marker is
 *   durable (attempt-record.ts): the attempt's outcome outlives its bytes.
 * - The object is deleted only while HEAD shows the journal's exact identity (size and
 *   sha256). Another identity under the key is a late object: it is not touched, the
 *   root closes (DELETED, lateObject) and the next scan gives it a new epoch and grace.
 * - A lost DELETE response (or request) is resolved by exact absence: HEAD again; present
 *   with the same identity, the DELETE is sent again (bounded).
 */
export async function deleteSealed(input: unknown, ports: Ports): Promise<GcRun> {
  const run = runOf(input, 0);
  await eachOfPage(run.deleting, async (entry) => {
    const root = await loadRoot(ports, run, entry.key);
    if (root?.state !== 'DELETING' || !root.journal || !sameJournal(root, entry)) return;
    // A committed attempt's evidence outlives its WAL object (attempt-record.ts).
    if (!root.journal.absent && !(await keepCommittedEvidence(ports, run, root.journal.objectKey))) return;
    if (await deleteExact(ports, root.journal)) run.totals.deleted++;
  });
  return run;
}

/** True when this call's DELETE is what removed the bytes (for the counts only). */
async function deleteExact(ports: Ports, journal: DeleteJournal): Promise<boolean> {
  const cut = GC_CUT_POINTS.delete;
  for (let round = 0; round < DELETE_ROUNDS; round++) {
    const head = await ports.objects.head(journal.objectKey);
    if (!head || !sameObject(head, journal)) return round > 0;
    await ports.objects.delete(cut, journal.objectKey);
  }
  const head = await ports.objects.head(journal.objectKey);
  if (!head || !sameObject(head, journal)) return true;
  throw new OutcomeUnknownError(cut, `${cut}: ${journal.objectKey} is still present after ${DELETE_ROUNDS} deletes`);
}

/**
 * Finalize: DELETING → DELETED once the journal's exact object is absent (or another
 * identity stands there: a late object, recorded). A lost root-CAS response is resolved
 * by root reload (the move id, see moveRoot); a root already DELETED under the same
 * epoch and delete id is this journal's finalization.
 */
export async function finalizeDeleted(input: unknown, ports: Ports): Promise<GcRun> {
  const run = runOf(input, 0);
  const deletedAt = ports.clock.now().toISOString();
  await eachOfPage(run.deleting, async (entry) => {
    const root = await loadRoot(ports, run, entry.key);
    if (!root?.journal || !sameJournal(root, entry) || root.state !== 'DELETING') return;
    const head = await ports.objects.head(entry.key);
    if (head && sameObject(head, root.journal)) return; // not yet absent: the next run deletes it
    if (await moveRoot(ports, GC_CUT_POINTS.finalize, root, { state: 'DELETED', deletedAt, lateObject: head !== undefined })) run.totals.finalized++;
  });
  run.deleting = [];
  return run;
}

function sameJournal(root: LifecycleRoot | undefined, entry: { epoch: number; deleteId: string }): boolean {
  return !!root && (root.state === 'DELETING' || root.state === 'DELETED') && root.epoch === entry.epoch && root.journal?.deleteId === entry.deleteId;
}

/** Exact identity of the sealed object: size and checksum (the journal's absent object matches nothing). */
function sameObject(head: ObjectHead, journal: DeleteJournal): boolean {
  return !journal.absent && head.size === journal.size && (head.metadata.sha256 ?? '') === journal.sha256;
}
