import { escalationPageOf, runbookLinkOf, runbookPage } from '../docs/runbook/ref.js';
import type { IndexItem, IndexProjection, InspectProjection } from '../domain/quality/projection.js';
import type { RunbookLink } from '../domain/runbook-link.js';

/** What decides an operation's page: the guard, the capsule, the journal, and what its guide offers. */
type Governed = Pick<IndexItem, 'capsule_state' | 'journal_state' | 'permitted_actions' | 'reader_guard_held'> & {
  capsule_version?: InspectProjection['capsule_version'];
};

/**
 * The runbook page and the one command of a governed operation (src/docs/runbook/ref.ts):
 * a held reader guard is READER_GUARD_HELD whatever else holds; a readable capsule is its
 * state's page; otherwise the journal state's delivery page. A journal that could not be
 * read has no state page: the runbook's escalation, and `quality inspect` to read it again.
 */
export function qualityRunbookOf(item: Governed): RunbookLink {
  const permitted = item.permitted_actions;
  if (item.reader_guard_held) return runbookLinkOf('quality', 'READER_GUARD_HELD', { permitted });
  if (item.capsule_state !== null && item.capsule_version !== 1 && hasPage(item.capsule_state))
    return runbookLinkOf('quality', item.capsule_state, { permitted });
  if (item.journal_state !== 'unknown') return runbookLinkOf('delivery', item.journal_state, { permitted: [] });
  return { command: runbookPage('quality', 'PREPARED').inspect, page: escalationPageOf() };
}

function hasPage(state: string): boolean {
  try {
    runbookPage('quality', state);
    return true;
  } catch {
    return false;
  }
}

const sortedKeys = <T extends object>(value: T): T =>
  Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) as T;

/** `quality inspect` with its `runbook`. */
export function inspectWithRunbook(p: InspectProjection): InspectProjection {
  return sortedKeys({
    ...p,
    runbook: qualityRunbookOf({ ...p, reader_guard_held: p.reader_guard.held }),
  });
}

/** `quality inspect-all` with a `runbook` per item. */
export function indexWithRunbook(index: IndexProjection): IndexProjection {
  return { ...index, items: index.items.map((item) => sortedKeys({ ...item, runbook: qualityRunbookOf(item) })) };
}
