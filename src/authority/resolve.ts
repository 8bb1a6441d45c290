import { OutcomeUnknownError } from '../domain/errors.js';
import type { AuthorityItem, AuthorityStore, ItemKey, WriteOutcome } from '../ports/authority.js';

/**
 * What reloading the exact item after a write proves.
 * - APPLIED: the item under the key carries our exact identity (our write landed, now or
 *   earlier — a lost response, or a retry after a crash).
 * - NOT_APPLIED: the item is absent or is someone else's; `current` is what is there.
 */
export type Resolved =
  { status: 'APPLIED'; item: AuthorityItem } | { status: 'NOT_APPLIED'; current: AuthorityItem | undefined };

/**
 * Resolves an UNKNOWN (or a CONFLICT that may be our own earlier write) by reloading the
 * exact item and comparing identity with `isOurs`. Never "a similar item exists".
 */
export async function reloadAndCompare(
  store: AuthorityStore,
  key: ItemKey,
  isOurs: (item: AuthorityItem) => boolean,
): Promise<Resolved> {
  const current = await store.get(key);
  if (current && isOurs(current)) return { status: 'APPLIED', item: current };
  return { status: 'NOT_APPLIED', current };
}

/**
 * Runs a conditional write whose expected state makes it safe to repeat (at most one
 * application can ever succeed), resolving UNKNOWN by exact reload. Returns APPLIED when
 * our identity is durable — whether this call or an earlier lost one wrote it — and
 * CONFLICT with the current item otherwise. A still-UNKNOWN outcome after `attempts`
 * leaves as `Cutpoint.OutcomeUnknown` for the flow to resolve.
 */
export async function writeExactlyOnce(
  store: AuthorityStore,
  cutPoint: string,
  key: ItemKey,
  write: () => Promise<WriteOutcome>,
  isOurs: (item: AuthorityItem) => boolean,
  attempts = 2,
): Promise<{ status: 'APPLIED'; item: AuthorityItem } | { status: 'CONFLICT'; current: AuthorityItem | undefined }> {
  let lastReason = '';
  for (let attempt = 0; attempt < attempts; attempt++) {
    const outcome = await write();
    if (outcome.status === 'APPLIED') return outcome;
    if (outcome.status === 'CONFLICT') {
      // Our own earlier write (a lost response) also fails the condition now.
      if (outcome.current && isOurs(outcome.current)) return { status: 'APPLIED', item: outcome.current };
      return outcome;
    }
    lastReason = outcome.reason;
    const resolved = await reloadAndCompare(store, key, isOurs);
    if (resolved.status === 'APPLIED') return resolved;
    // Not applied (yet): the write's own condition makes one more attempt safe.
  }
  throw new OutcomeUnknownError(
    cutPoint,
    `${cutPoint}: outcome still unknown after ${attempts} attempts (${lastReason})`,
  );
}
