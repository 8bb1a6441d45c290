import type { Fence } from '../domain/fence.js';

/**
 * The fenced authority: a key-value store of versioned items where every mutation is a
 * conditional write naming the expected version (and, where the caller holds one, its
 * fencing token). Implemented over DynamoDB.
 */
export interface ItemKey {
  pk: string;
  sk: string;
}

/** A stored item: key, monotonically increasing version, optional fence, attributes. */
export type AuthorityItem = ItemKey & {
  version: number;
  fence?: Fence;
  [attribute: string]: unknown;
};

/** An item as a writer proposes it; the store assigns the version. */
export type NewItem = ItemKey & { fence?: Fence; [attribute: string]: unknown };

/**
 * What a conditional write expects to find:
 * - `absent`: no item under the key;
 * - `{ version, fence? }`: exactly that version (and fence) is current.
 */
export type Expectation = 'absent' | { version: number; fence?: Fence };

/**
 * The three outcomes of a write. CONFLICT carries the current item (or undefined when it
 * is absent). UNKNOWN is resolved only by reloading the exact item and comparing identity.
 */
export type WriteOutcome =
  | { status: 'APPLIED'; item: AuthorityItem }
  | { status: 'CONFLICT'; current: AuthorityItem | undefined }
  | { status: 'UNKNOWN'; reason: string };

/** One leg of a transaction; a transaction is all-or-nothing. */
export type TransactionLeg =
  | { kind: 'put'; item: NewItem; expect: Expectation }
  | { kind: 'update'; key: ItemKey; expect: { version: number; fence?: Fence }; set: Record<string, unknown> }
  | { kind: 'delete'; key: ItemKey; expect: { version: number; fence?: Fence } }
  /** Delete the item if there is one, whatever its version (an index entry some writers never made). */
  | { kind: 'forget'; key: ItemKey }
  | { kind: 'check'; key: ItemKey; expect: Expectation };

export type TransactionOutcome =
  | { status: 'APPLIED' }
  /** One entry per leg, in order: the current item of each leg whose condition failed. */
  | { status: 'CONFLICT'; conflicts: Array<{ leg: number; current: AuthorityItem | undefined }> }
  | { status: 'UNKNOWN'; reason: string };

/**
 * Which table the authority is (docs/rules.md#authority-binding: DescribeTable's ARN, TableId
 * where the store has one, creation time). A point-in-time or backup restore always creates
 * a new table, so a replay that finds another binding is not on the authority it proved
 * against. DynamoDB Local has no TableId and keeps the ARN across a re-create, so the
 * creation time is always part of it.
 */
export type { AuthorityBinding } from '../domain/quality/core.js';
import type { AuthorityBinding } from '../domain/quality/core.js';

export interface AuthorityStore {
  /** DescribeTable of the authority table (read-only). */
  describeBinding(): Promise<AuthorityBinding>;
  /** Strongly consistent read of one exact item. */
  get(key: ItemKey): Promise<AuthorityItem | undefined>;
  /**
   * A few exact items (at most 25) read as one snapshot, in the order of `keys`: items a
   * transaction wrote together are seen all before it or all after it. Separate reads, even
   * strongly consistent ones, can straddle a transaction (DynamoDB TransactGetItems).
   */
  getTogether(keys: ItemKey[]): Promise<Array<AuthorityItem | undefined>>;
  /** Items of one partition whose sort key starts with `skPrefix`, in sort-key order. */
  query(pk: string, skPrefix: string, options?: { limit?: number; startAfterSk?: string }): Promise<AuthorityItem[]>;
  /**
   * Conditional put. The store assigns the version: creating an item writes version 1,
   * replacing version n writes n + 1 (any `version` on `item` is ignored).
   */
  put(cutPoint: string, item: NewItem, expect: Expectation): Promise<WriteOutcome>;
  /** Conditional update of named attributes; bumps the version by one. */
  update(
    cutPoint: string,
    key: ItemKey,
    expect: { version: number; fence?: Fence },
    set: Record<string, unknown>,
  ): Promise<WriteOutcome>;
  /** Conditional delete. APPLIED carries the deleted item. */
  delete(cutPoint: string, key: ItemKey, expect: { version: number; fence?: Fence }): Promise<WriteOutcome>;
  /** Two (or a few) items that must move together. */
  transact(cutPoint: string, legs: TransactionLeg[]): Promise<TransactionOutcome>;
}
