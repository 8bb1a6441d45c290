import { runbookLinkOf } from '../../docs/runbook/ref.js';
import type { RecoveryIndexItem } from '../../domain/delivery/identifiers.js';
import type { RunbookLink } from '../../domain/runbook-link.js';

/**
 * An inspect item with the runbook page of its journal state and the one command its guide
 * offers there (src/docs/runbook/ref.ts: the page's command of the first permitted action,
 * or its inspect command when nothing is permitted). Keys stay in sorted order, as every
 * recovery output prints them.
 */
export function withRunbook<T extends RecoveryIndexItem>(item: T): T & { runbook: RunbookLink } {
  const runbook = runbookLinkOf('delivery', item.state, { permitted: item.permitted_actions });
  return Object.fromEntries(
    Object.entries({ ...item, runbook }).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  ) as T & { runbook: RunbookLink };
}
