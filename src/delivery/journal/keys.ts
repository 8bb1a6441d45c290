import { Journal } from '../../authority/journal.js';
import { validateInvocationId, isInvocationId } from '../../domain/delivery/identifiers.js';
import { ValidationError } from '../../domain/errors.js';
import type { AuthorityStore, ItemKey } from '../../ports/authority.js';
import type { Fence } from '../../domain/fence.js';
import { DELIVERY_CUT_POINTS } from '../cut-points.js';

/**
 * The delivery journal and target custody in the authority table (docs/rules.md#authority-keys,
 * docs/rules.md#custody): the identifiers and the keys.
 *
 * Key layout (one table, pk/sk, no index):
 *
 *   target#<targetId>       custody              who holds the target: fence {owner = invocation id,
 *                                                session, epoch} while HELD; the last epoch when RELEASED
 *   target#<targetId>       checkpoint#<route>   the route's checkpoint (checkpoint.ts)
 *   delivery#<targetId>     inv#<invocationId>   the invocation record: state, sealed authority,
 *                                                facts, custodyEpoch, journalSeq (the journal head)
 *   delivery#invocations    inv#<invocationId>   pointer → targetId: `inspect <id>` finds the
 *                                                target from the id alone; inspect-all lists them
 *   journal#<invocationId>  seq#<12 digits>      the gap-free journal records (authority/journal.ts layout)
 *   journal#<invocationId>  tx#<transitionId>    the claim: a transition id is journaled once
 *   parts#<invocationId>    part#<6 digits>      one part's head: its receipts' running totals and
 *                                                digest, EOF, the last chunk (src/delivery/parts/)
 *   parts#<invocationId>    batch#<part>#<k>     the receipts of the part's chunks 16k..16k+15
 *   delivery#held           inv#<invocationId>   an invocation holding its target's custody: written by
 *                                                begin, deleted by the terminal transition (what the
 *                                                retained-items sweep reads: src/operations/retained.ts)
 *   delivery#released       at#<releasedAt>#<id> a finished invocation whose work objects are not yet
 *                                                expired: written by its terminal transition, deleted by
 *                                                delivery-expire once they are (src/delivery/expiry/)
 *
 *
 * Every write goes through `journaledWrite` (journaled-write.ts). The records are readable
 * with the `Journal` class (`journalOf`), whose own `append` must not be used on these
 * partitions: the head lives in the invocation record, not in a `head` item.
 */

/** `targetIdOf` output: `<binding>.<schema>.<table>`, lower-case. */
const TARGET_ID = /^[a-z][a-z0-9_-]{0,63}\.[a-z_][a-z0-9_]{0,62}\.[a-z_][a-z0-9_]{0,62}$/;
/** Caller transition ids: the journal's alphabet; `sys:` is reserved for the journal's own writes (custody.ts, checkpoint.ts). */
export const TRANSITION_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const SESSION = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

export function isTargetId(value: unknown): value is string {
  return typeof value === 'string' && TARGET_ID.test(value);
}

export function validateTargetId(value: unknown): string {
  if (!isTargetId(value))
    throw new ValidationError(
      'delivery.target_id_invalid',
      'target id must be <binding>.<schema>.<table> in lower case',
    );
  return value;
}

export function validateTransitionId(value: unknown): string {
  if (typeof value !== 'string' || !TRANSITION_ID.test(value) || value.startsWith('sys:')) {
    throw new ValidationError(
      'delivery.transition_id_invalid',
      'transition id must be 1-128 characters of [A-Za-z0-9._:-] and not start with sys:',
    );
  }
  return value;
}

export function validateSession(value: unknown): string {
  if (typeof value !== 'string' || !SESSION.test(value)) {
    throw new ValidationError('delivery.session_invalid', 'session must be 1-100 characters of [A-Za-z0-9._-]');
  }
  return value;
}

export function validateCustodyFence(value: unknown): Fence {
  const f = value as Partial<Fence> | null;
  if (
    !f ||
    typeof f !== 'object' ||
    !isInvocationId(f.owner) ||
    typeof f.session !== 'string' ||
    !SESSION.test(f.session) ||
    !Number.isSafeInteger(f.epoch) ||
    (f.epoch as number) < 1
  ) {
    throw new ValidationError(
      'delivery.fence_invalid',
      'fence must name an invocation id, a session and an epoch >= 1',
    );
  }
  return { owner: f.owner, session: f.session, epoch: f.epoch as number };
}

/** Which invocation of which target a write addresses. */
export interface InvocationRef {
  targetId: string;
  invocationId: string;
}

export function validateInvocationRef(value: unknown): InvocationRef {
  const r = value as Partial<InvocationRef> | null;
  if (!r || typeof r !== 'object')
    throw new ValidationError(
      'delivery.invocation_ref_invalid',
      'an invocation reference needs targetId and invocationId',
    );
  return { targetId: validateTargetId(r.targetId), invocationId: validateInvocationId(r.invocationId) };
}

const SEQ_WIDTH = 12; // authority/journal.ts
const pad6 = (n: number): string => String(n).padStart(6, '0');
export const INVOCATIONS_PK = 'delivery#invocations';
export const RELEASED_PK = 'delivery#released';
export const HELD_PK = 'delivery#held';
/** The released index's sort keys: `at#<releasedAt ISO-8601>#<invocationId>`, in release order. */
export const RELEASED_SK_PREFIX = 'at#';

export const deliveryKeys = {
  custody: (targetId: string): ItemKey => ({ pk: `target#${targetId}`, sk: 'custody' }),
  checkpoint: (targetId: string, route: string): ItemKey => ({ pk: `target#${targetId}`, sk: `checkpoint#${route}` }),
  invocationsOf: (targetId: string): string => `delivery#${targetId}`,
  invocation: (targetId: string, invocationId: string): ItemKey => ({
    pk: `delivery#${targetId}`,
    sk: `inv#${invocationId}`,
  }),
  pointer: (invocationId: string): ItemKey => ({ pk: INVOCATIONS_PK, sk: `inv#${invocationId}` }),
  journal: (invocationId: string): string => `journal#${invocationId}`,
  journalRecord: (invocationId: string, seq: number): ItemKey => ({
    pk: `journal#${invocationId}`,
    sk: `seq#${String(seq).padStart(SEQ_WIDTH, '0')}`,
  }),
  journalClaim: (invocationId: string, transitionId: string): ItemKey => ({
    pk: `journal#${invocationId}`,
    sk: `tx#${transitionId}`,
  }),
  held: (invocationId: string): ItemKey => ({ pk: HELD_PK, sk: `inv#${invocationId}` }),
  released: (releasedAt: string, invocationId: string): ItemKey => ({
    pk: RELEASED_PK,
    sk: `${RELEASED_SK_PREFIX}${releasedAt}#${invocationId}`,
  }),
  partsOf: (invocationId: string): string => `parts#${invocationId}`,
  part: (invocationId: string, part: number): ItemKey => ({ pk: `parts#${invocationId}`, sk: `part#${pad6(part)}` }),
  batch: (invocationId: string, part: number, batch: number): ItemKey => ({
    pk: `parts#${invocationId}`,
    sk: `batch#${pad6(part)}#${pad6(batch)}`,
  }),
} as const;

/** Read access to an invocation's journal records (`read`, `find`); never `append`. */
export function journalOf(store: AuthorityStore, invocationId: string): Journal {
  return new Journal(store, deliveryKeys.journal(invocationId), DELIVERY_CUT_POINTS.journalTransition);
}
