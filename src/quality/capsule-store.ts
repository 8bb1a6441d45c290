import { parseCapsule } from '../domain/quality/capsule-parse.js';
import type { CapsuleV2, StoredCapsule } from '../domain/quality/capsule.js';
import type { ItemKey, TransactionLeg } from '../ports/authority.js';
import type { Ports } from '../ports/index.js';

/**
 * The quality capsule in the authority table (docs/rules.md#quality-capsule: the authority row;
 * its store-assigned `version` is the row version the rollback rule compares with the
 * completion version).
 *
 *   quality#<targetId>   capsule#<invocationId>   the capsule of one publication operation
 *   target#<targetId>    boundary#<12 digits>     a successor's record that it closed an
 *                                                 operation's replay window
 *                                                 (docs/rules.md#successors-and-replay-window)
 *
 * The capsule never changes on its own: every write to it is a leg of the invocation's
 * journaled write (src/delivery/journal/transition.ts `legs`), so the journal record, the
 * custody fence and the capsule move in one transaction, conditioned on the capsule version
 * the caller read (which is also how "reader.token == ours" is enforced: the caller checks
 * the token on the version it read, and the version condition refuses any later change).
 * The delivery journal is the capsule's journal: there is no separate capsule journal (one
 * journal per operation, one exactly-once writer).
 */

const pad12 = (n: number): string => String(n).padStart(12, '0');

export const qualityKeys = {
  capsulesOf: (targetId: string): string => `quality#${targetId}`,
  capsule: (targetId: string, invocationId: string): ItemKey => ({
    pk: `quality#${targetId}`,
    sk: `capsule#${invocationId}`,
  }),
  boundary: (targetId: string, seq: number): ItemKey => ({ pk: `target#${targetId}`, sk: `boundary#${pad12(seq)}` }),
} as const;

export interface CapsuleRef {
  targetId: string;
  invocationId: string;
}

/** Strongly consistent read; a stored item that does not parse is `quality.evidence_malformed`, never a default. */
export async function readCapsule(
  ports: Pick<Ports, 'authority'>,
  ref: CapsuleRef,
): Promise<StoredCapsule | undefined> {
  const item = await ports.authority.get(qualityKeys.capsule(ref.targetId, ref.invocationId));
  return item === undefined ? undefined : parseCapsule(item);
}

/** The capsule's attributes as stored (the key and version are the store's). */
export type CapsuleAttributes = Omit<CapsuleV2, 'version'>;

/** Creates the PREPARED capsule: must be absent (a second prepare of the same operation conflicts). */
export function capsulePutLeg(ref: CapsuleRef, capsule: CapsuleAttributes): TransactionLeg {
  return {
    kind: 'put',
    item: { ...qualityKeys.capsule(ref.targetId, ref.invocationId), ...capsule },
    expect: 'absent',
  };
}

/** Changes the capsule read at `capsule.version`; an attribute set to `undefined` is removed (the reader guard's release). */
export function capsuleUpdateLeg(
  ref: CapsuleRef,
  capsule: Pick<CapsuleV2, 'version'>,
  set: Partial<Record<keyof CapsuleAttributes, unknown>>,
): TransactionLeg {
  return {
    kind: 'update',
    key: qualityKeys.capsule(ref.targetId, ref.invocationId),
    expect: { version: capsule.version },
    set,
  };
}

/** The capsule must still be exactly the version read (e.g. PREPARED with no reader, for the dispatch intent). */
export function capsuleCheckLeg(ref: CapsuleRef, capsule: Pick<StoredCapsule, 'version'>): TransactionLeg {
  return {
    kind: 'check',
    key: qualityKeys.capsule(ref.targetId, ref.invocationId),
    expect: { version: capsule.version },
  };
}
