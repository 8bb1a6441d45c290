import { EffectFailedError } from '../../domain/errors.js';
import type { ObjectHead } from '../../ports/objects.js';
import type { Ports } from '../../ports/index.js';
import { keepCommittedEvidence } from './attempt-record.js';
import { GC_CUT_POINTS } from './cut-points.js';
import type { DeleteJournal, LifecycleRoot } from './model.js';
import { collectibleNow } from './recheck.js';
import { loadRoot, moveRoot } from './roots.js';
import { eachOfPage, runOf, type GcRun } from './state.js';

/**
 * Delete, then finalize, each DELETING root of the page from its sealed journal.
 * - The root is reloaded and must still be DELETING under the same epoch and delete id
 *   (exact identity); anything else is left alone.
 * - The object is deleted only while HEAD shows the journal's exact identity (size and
 *   sha256). Another identity under the key is a late object: it is not touched, the
 *   root closes (DELETED, lateObject) and the next scan gives it a new epoch and grace.
 * - A committed attempt's WAL object is deleted only after its collected record is
 *   durable (attempt-record.ts): the attempt's outcome outlives its bytes.
 * - One DELETE per journal, ever: the journal records that it goes out (`sentAt`, cut
 *   point stream.gc.send) before it is sent. A lost answer is resolved by exact absence;
 *   the journal's identity still there after the DELETE went out cannot be told from an
 *   identical late object (a delayed PUT of the same bytes), so it is never deleted under
 *   this epoch: the root closes as a late object and the scanner gives it a new epoch and a
 *   fresh grace (docs/stream-log.md "The stream log", GC). Only a definite failure (nothing sent) clears
 *   the record for the next try.
 * - Immediately before the DELETE the preconditions are proven again from the authority
 *   (recheck.ts): an object no longer collectible under the run's policy (a superseded copy
 *   whose compaction stopped verifying) is not deleted, and its root goes back to ACTIVE.
 */
export async function deleteSealed(input: unknown, ports: Ports): Promise<GcRun> {
  const run = runOf(input, 0);
  await eachOfPage(run.deleting, async (entry) => {
    let root = await loadRoot(ports, run, entry.key);
    if (root?.state !== 'DELETING' || !root.journal || !sameJournal(root, entry) || root.journal.absent) return;
    const head = await ports.objects.head(root.objectKey);
    // Gone, another identity, or still there after this journal's DELETE went out: Finalize decides.
    if (!head || !sameObject(head, root.journal) || root.journal.sentAt) return;
    // A committed attempt's evidence outlives its WAL object (attempt-record.ts).
    if (!(await keepCommittedEvidence(ports, run, root.objectKey))) return;
    root = await moveRoot(ports, GC_CUT_POINTS.send, root, {
      journal: { ...root.journal, sentAt: ports.clock.now().toISOString() },
    });
    if (!root?.journal) return; // moved by another run meanwhile: the next run decides again
    const recheck = await collectibleNow(ports, run, root);
    if (!recheck.collectible) {
      // Nothing was sent: the journal is withdrawn with the mark, the root is ACTIVE again.
      const back = {
        state: 'ACTIVE',
        fate: recheck.fate,
        journal: null,
        markedAt: null,
        policyDigest: null,
      } as unknown as Partial<LifecycleRoot>;
      if (await moveRoot(ports, GC_CUT_POINTS.mark, root, back)) run.totals.unsealed++;
      return;
    }
    if (await deleteOnce(ports, root)) run.totals.deleted++;
  });
  return run;
}

/** The journal's one DELETE. True when its bytes are gone now; a definite failure clears `sentAt` and fails the step. */
async function deleteOnce(ports: Ports, root: LifecycleRoot): Promise<boolean> {
  const journal = root.journal!;
  try {
    await ports.objects.delete(GC_CUT_POINTS.delete, journal.objectKey);
  } catch (error) {
    if (error instanceof EffectFailedError) {
      const { sentAt: _sent, ...unsent } = journal;
      await moveRoot(ports, GC_CUT_POINTS.send, root, { journal: unsent });
    }
    throw error;
  }
  const head = await ports.objects.head(journal.objectKey);
  return !head || !sameObject(head, journal);
}

/**
 * Finalize: DELETING → DELETED once the journal's exact object is absent, or another
 * identity stands there, or the journal's identity stands there after its DELETE went out
 * (a late object either way, recorded: the scanner renews the root). A lost root-CAS
 * response is resolved by root reload (the move id, see moveRoot); a root already DELETED
 * under the same epoch and delete id is this journal's finalization.
 */
export async function finalizeDeleted(input: unknown, ports: Ports): Promise<GcRun> {
  const run = runOf(input, 0);
  const deletedAt = ports.clock.now().toISOString();
  await eachOfPage(run.deleting, async (entry) => {
    const root = await loadRoot(ports, run, entry.key);
    if (!root?.journal || !sameJournal(root, entry) || root.state !== 'DELETING') return;
    const head = await ports.objects.head(entry.key);
    const sealedStillThere = head !== undefined && sameObject(head, root.journal);
    if (sealedStillThere && !root.journal.sentAt) return; // not deleted yet: the next run deletes it
    if (
      await moveRoot(ports, GC_CUT_POINTS.finalize, root, {
        state: 'DELETED',
        deletedAt,
        lateObject: head !== undefined,
      })
    ) {
      run.totals.finalized++;
      if (sealedStillThere) run.totals.lateAfterDelete++;
    }
  });
  run.deleting = [];
  return run;
}

function sameJournal(root: LifecycleRoot | undefined, entry: { epoch: number; deleteId: string }): boolean {
  return (
    !!root &&
    (root.state === 'DELETING' || root.state === 'DELETED') &&
    root.epoch === entry.epoch &&
    root.journal?.deleteId === entry.deleteId
  );
}

/** Exact identity of the sealed object: size and checksum (the journal's absent object matches nothing). */
function sameObject(head: ObjectHead, journal: DeleteJournal): boolean {
  return !journal.absent && head.size === journal.size && (head.metadata.sha256 ?? '') === journal.sha256;
}
