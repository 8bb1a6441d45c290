import { proofsLacking, proofsOf, type ProofFacts } from './journal-proofs.js';
import { holdsCustody, type JournalState } from './journal-states.js';

/**
 * The journal's own invariants, checked on every read (docs/rules.md#journal-invariants: a missing,
 * unreadable, ambiguous or inconsistent journal exits 1). Every write keeps them — state,
 * facts, journal head and custody move in one transaction (src/delivery/journal/journaled-write.ts)
 * — so a violation means the authority table was edited, torn or restored in part, and
 * nothing may be projected or acted on from it. Pure: the caller reads, these decide.
 * Each problem is one short sentence naming opaque identifiers only, never content.
 */

/** What the invariants look at in an invocation record. */
export interface RecordView {
  invocationId: string;
  state: JournalState;
  custodyEpoch: number;
  facts: ProofFacts;
}

/** What the invariants look at in a target's custody item. */
export interface CustodyView {
  state: 'HELD' | 'RELEASED';
  invocationId: string;
  epoch: number;
}

/**
 * State ↔ facts: a state whose proofs are not journaled — the same rule the transition into
 * it enforced (journal-proofs.ts `missingProof`), for it and the states on the path to it.
 */
export function factProblems(record: RecordView): string[] {
  const problems = proofsLacking(record.state, proofsOf(record.facts)).map(
    (lack) => `invocation ${record.invocationId} is ${record.state}, but ${lack}`,
  );
  // The continuation proof belongs to the PARTIAL_PROVED it was journaled with: every way out drops it.
  if (record.facts.continuable !== undefined && record.state !== 'PARTIAL_PROVED')
    problems.push(`invocation ${record.invocationId} is ${record.state}, but carries a continuation proof`);
  return problems;
}

/** Custody ↔ record, seen from one record: a retaining state holds custody at its epoch; a terminal one does not. */
export function custodyProblems(record: RecordView, custody: CustodyView | undefined): string[] {
  const id = record.invocationId;
  if (!custody) return [`invocation ${id} has a journal record but its target has no custody record`];
  const heldByIt = custody.state === 'HELD' && custody.invocationId === id;
  if (holdsCustody(record.state)) {
    if (!heldByIt)
      return [
        `invocation ${id} retains custody in ${record.state} but the target's custody is ${custody.state === 'HELD' ? `held by ${custody.invocationId}` : 'released'}`,
      ];
    if (custody.epoch !== record.custodyEpoch)
      return [`invocation ${id} records custody epoch ${record.custodyEpoch} but holds epoch ${custody.epoch}`];
    return [];
  }
  return heldByIt ? [`invocation ${id} is ${record.state} but still holds the target's custody`] : [];
}

/**
 * Custody ↔ records, seen from one target: the invocation the custody item names (the
 * holder, or the last holder) must have a journal record on that target (`recorded`: the
 * invocation ids of the target's records, readable or not).
 */
export function targetProblems(
  targetId: string,
  custody: CustodyView | undefined,
  recorded: readonly string[],
): string[] {
  if (!custody || recorded.includes(custody.invocationId)) return [];
  return custody.state === 'HELD'
    ? [
        `target ${targetId} is in the custody of invocation ${custody.invocationId}, which has no journal record (orphaned custody)`,
      ]
    : [`target ${targetId} was last held by invocation ${custody.invocationId}, which has no journal record`];
}

/** The journal head (the record's journalSeq) against the journal records read at it and after it. */
export function headProblems(
  record: RecordView & { journalSeq: number; lastTransitionId: string },
  at: { first?: Record<string, unknown> | undefined; head?: Record<string, unknown> | undefined; next?: unknown },
): string[] {
  const id = record.invocationId;
  if (!at.first) return [`invocation ${id} has no first journal record`];
  if (!at.head) return [`invocation ${id}'s journal head ${record.journalSeq} points past the last journal record`];
  if (at.head.transitionId !== record.lastTransitionId)
    return [`invocation ${id}'s journal head ${record.journalSeq} names another transition than its record`];
  if (at.next !== undefined) return [`invocation ${id} has journal records past its head ${record.journalSeq}`];
  return [];
}
