import { CutpointError } from '../domain/errors.js';
import type { TaskCleanup } from '../generation/cleanup-task.js';
import type { ItemKey } from '../ports/authority.js';
import type { Ports } from '../ports/index.js';

/** One task a lane's maintenance left behind, by the end offset of what it produced. */
export interface CleanupEntry {
  end: number;
  clean: () => Promise<TaskCleanup>;
}

export interface CursorCleanup {
  /** Tasks this call removed or found gone. */
  cleaned: number;
  /** Every task of the kind ending at or below it is cleaned. */
  cleanedTo: number;
  /** The first task that refused (kept for a later run). */
  refused?: { end: number; reason: string };
  /** The cleanup stopped on an error (a crash, a lost answer): the rest is left for a later run. */
  failed?: string;
}

/** Entries cleaned per call (bounded: a lane with a long history catches up over several runs). */
export const CLEANUP_LIMIT = 32;

/**
 * Task cleanup over one of a lane's marks, task-first and plan-second (docs/stream-log.md "The
 * generation-commit flow", task cleanup): the mark item (`gen0#mark`, `compact#mark`) keeps
 * `cleanedTo`, the end offset up to which every committed task of its kind is cleaned (an
 * ABORTED task stays: the proof of its abort). A call cleans
 * the tasks between `cleanedTo` and the mark's `next`, in offset order (at most
 * CLEANUP_LIMIT), stops at the first refusal — that task stays and the next run finds it
 * again from the cursor — and only then moves `cleanedTo` by CAS on the mark's version (a
 * conflict or lost answer leaves it for the next run: the cleanups are idempotent). So a
 * cleanup that failed is never forgotten, and the cursor never passes a task still there.
 * It runs after the run's own effects are durable: an error here (a CutpointError) is
 * reported in `failed`, never fails the run.
 */
export async function cleanupUpToMark(
  ports: Ports,
  cut: string,
  markKey: ItemKey,
  entriesFrom: (cleanedTo: number, next: number) => Promise<CleanupEntry[]>,
): Promise<CursorCleanup> {
  const mark = await ports.authority.get(markKey);
  const next = typeof mark?.next === 'number' ? mark.next : 0;
  const from = typeof mark?.cleanedTo === 'number' ? mark.cleanedTo : 0;
  const result: CursorCleanup = { cleaned: 0, cleanedTo: from };
  if (!mark || from >= next) return result;
  try {
    await walk(await entriesFrom(from, next), next, result);
    if (result.cleanedTo > from) {
      const moved = await ports.authority.update(
        cut,
        markKey,
        { version: mark.version },
        { cleanedTo: result.cleanedTo },
      );
      if (moved.status !== 'APPLIED') result.cleanedTo = from; // the next run moves it
    }
  } catch (error) {
    if (!(error instanceof CutpointError)) throw error;
    return { ...result, cleanedTo: from, failed: `${error.name}: ${error.message}` };
  }
  return result;
}

/** The entries in offset order up to the mark, until the first refusal. */
async function walk(entries: CleanupEntry[], next: number, result: CursorCleanup): Promise<void> {
  for (const entry of entries.slice(0, CLEANUP_LIMIT)) {
    if (entry.end > next) break;
    const outcome = await entry.clean();
    if (!outcome.cleaned && outcome.aborted) {
      result.cleanedTo = entry.end; // an aborted task is the proof of its abort: it stays, and the cursor moves on
      continue;
    }
    if (!outcome.cleaned) {
      result.refused = { end: entry.end, reason: outcome.refused };
      break;
    }
    result.cleaned++;
    result.cleanedTo = entry.end;
  }
}
