import { OutcomeUnknownError, ValidationError } from '../domain/errors.js';
import type { AuthorityItem, AuthorityStore } from '../ports/authority.js';

/**
 * An append-only journal of transition records under one authority partition, with a
 * gap-free monotonic sequence. Each append is one transaction: the journal head moves
 * from seq n to n + 1 (CAS on its version) and record n + 1 is created (must be absent).
 * A third leg claims the transition id (`tx#<id>`, must be absent), so a transition can
 * never be journaled twice, however late a retry comes. A lost response is resolved by
 * reloading that claim and comparing the transition id and sequence.
 */
export interface JournalEntry {
  seq: number;
  transitionId: string;
  type: string;
  at: string;
  data: Record<string, unknown>;
}

const seqKey = (seq: number) => `seq#${String(seq).padStart(12, '0')}`;
const txKey = (transitionId: string) => `tx#${transitionId}`;

export class Journal {
  constructor(
    private readonly store: AuthorityStore,
    /** e.g. `journal#delivery/route-a/inv-1` */
    private readonly pk: string,
    private readonly cutPoint: string,
  ) {}

  /**
   * Appends a transition once. Appending a transition id that is already in the journal
   * returns the existing entry (a retry after a lost response or a crash).
   */
  async append(
    transitionId: string,
    type: string,
    data: Record<string, unknown>,
    at: string,
    attempts = 4,
  ): Promise<JournalEntry> {
    if (!/^[A-Za-z0-9._:-]{1,128}$/.test(transitionId)) {
      throw new ValidationError(
        'journal.invalid_transition_id',
        'transition id must be 1-128 characters of [A-Za-z0-9._:-]',
      );
    }
    for (let attempt = 0; attempt < attempts; attempt++) {
      const existing = await this.find(transitionId);
      if (existing) return existing;
      const head = await this.store.get({ pk: this.pk, sk: 'head' });
      const seq = (head?.seq as number | undefined) ?? 0;
      const entry: JournalEntry = { seq: seq + 1, transitionId, type, at, data };
      const outcome = await this.store.transact(this.cutPoint, [
        head
          ? {
              kind: 'update',
              key: { pk: this.pk, sk: 'head' },
              expect: { version: head.version },
              set: { seq: seq + 1, lastTransitionId: transitionId },
            }
          : {
              kind: 'put',
              item: { pk: this.pk, sk: 'head', seq: 1, lastTransitionId: transitionId },
              expect: 'absent',
            },
        { kind: 'put', item: { pk: this.pk, sk: seqKey(seq + 1), ...entry }, expect: 'absent' },
        { kind: 'put', item: { pk: this.pk, sk: txKey(transitionId), seq: seq + 1 }, expect: 'absent' },
      ]);
      if (outcome.status === 'APPLIED') return entry;
      // UNKNOWN or CONFLICT: the loop's first step reloads the exact claim. If it is
      // absent, the head CAS and the claim make one more attempt safe.
    }
    throw new OutcomeUnknownError(this.cutPoint, `journal ${this.pk}: append of ${transitionId} did not settle`);
  }

  async read(fromSeq = 1, limit?: number): Promise<JournalEntry[]> {
    const items = await this.store.query(this.pk, 'seq#', {
      startAfterSk: fromSeq > 1 ? seqKey(fromSeq - 1) : undefined,
      limit,
    });
    return items.map(toEntry);
  }

  /** The entry a transition id was journaled as, if it was. */
  async find(transitionId: string): Promise<JournalEntry | undefined> {
    const claim = await this.store.get({ pk: this.pk, sk: txKey(transitionId) });
    if (!claim) return undefined;
    const record = await this.store.get({ pk: this.pk, sk: seqKey(claim.seq as number) });
    if (record?.transitionId !== transitionId) {
      throw new OutcomeUnknownError(
        this.cutPoint,
        `journal ${this.pk}: claim for ${transitionId} has no matching record`,
      );
    }
    return toEntry(record);
  }
}

function toEntry(item: AuthorityItem): JournalEntry {
  return {
    seq: item.seq as number,
    transitionId: item.transitionId as string,
    type: item.type as string,
    at: item.at as string,
    data: (item.data as Record<string, unknown>) ?? {},
  };
}
