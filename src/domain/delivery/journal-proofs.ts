import type { JournalState } from './journal-states.js';

/*
 * The proofs a journal state requires (docs/rules.md#evidence-before-checkpoint: evidence is persisted
 * before the checkpoint advances, and cleanup happens before custody release; retire proves
 * the stages' absence, then releases custody), as one rule for both sides: the journal's transition write
 * refuses a state whose proof is missing (`missingProof`), and every read checks that a
 * record still carries the proofs of the states on its way (`proofsLacking`).
 */

/**
 * What the journal must already hold (or gain in the same transaction) before it may
 * enter a state — the proofs live in the transition rule itself, not in the order in
 * which callers happen to write:
 * - VERIFIED_EOF ("exact receipts and digest"): the parts' receipts as verify-eof proved
 *   them (rows, chunks, digest), which is what publication is held to;
 * - PUBLISHED: the publication receipt;
 * - SUCCEEDED: the evidence persisted and the checkpoint advanced;
 * - CUSTODY_RELEASED ("cleanup proved") and RETIRED ("owned stages retired", "proved
 *   non-publication"): the owned stage's absence proved by the target — for the recorded
 *   stage when one is recorded (exact table and object id), else for the stage's derived
 *   name. Custody is released only by these two transitions, so no custody is released
 *   before cleanup is proved. A stage that became the target's window partition (a
 *   partition swap: `dropStaging` ATTACHED) is gone as a stage only when the journaled
 *   publication receipt names that very object as its stage: that proves CUSTODY_RELEASED,
 *   never RETIRED (a retired invocation published nothing). A ClickHouse exchange
 *   publication's CUSTODY_RELEASED also needs its cleanup proved: the predecessor
 *   generation (the UUID its dispatch recorded) proved absent, and its quality capsule
 *   retired in the same transaction — the rule, not only the cleanup step, holds it.
 */
export interface TransitionProofs {
  partsVerified: boolean;
  publication: boolean;
  evidence: boolean;
  checkpoint: boolean;
  /** The owned stage is proved gone as a stage (dropped, or attached as the published partition). */
  stageAbsent: boolean;
  /** The proof of `stageAbsent` is the stage's attachment as the published partition (never enough for RETIRED). */
  stageAttached?: boolean;
  /** A ClickHouse exchange publication (its dispatch recorded): CUSTODY_RELEASED also needs `predecessorRetired`. */
  exchange?: boolean;
  /** The dispatch's predecessor proved absent and the capsule retired (the publicationCleanup fact, for that very predecessor). */
  predecessorRetired?: boolean;
}

/** The proof `to` lacks, as a sentence; undefined when the journal may enter it. */
export function missingProof(to: JournalState, proofs: TransitionProofs): string | undefined {
  switch (to) {
    case 'VERIFIED_EOF':
      return proofs.partsVerified
        ? undefined
        : "VERIFIED_EOF needs the parts' verified receipts (rows, chunks, digest) recorded in the same or an earlier transition";
    case 'PUBLISHED':
      return proofs.publication
        ? undefined
        : 'PUBLISHED needs the publication receipt recorded in the same or an earlier transition';
    case 'SUCCEEDED':
      return proofs.evidence && proofs.checkpoint
        ? undefined
        : 'SUCCEEDED needs the evidence persisted and the checkpoint advanced first';
    case 'CUSTODY_RELEASED':
      if (!proofs.stageAbsent)
        return "CUSTODY_RELEASED needs the owned stage's absence proved (cleanup) first; custody stays held";
      if (proofs.exchange && !proofs.predecessorRetired) {
        return 'CUSTODY_RELEASED of a ClickHouse publication needs its predecessor generation proved absent and its quality capsule retired in the same or an earlier transaction; custody stays held';
      }
      return undefined;
    case 'RETIRED':
      if (proofs.stageAttached)
        return 'RETIRED needs the owned stage dropped, and it is the published partition of this invocation; custody stays held';
      return proofs.stageAbsent
        ? undefined
        : "RETIRED needs the owned stage's absence proved in the same or an earlier transition; custody stays held";
    default:
      return undefined;
  }
}

/** The journal facts a proof is read from (src/delivery/journal/facts.ts `DeliveryFacts`, in part). */
export interface ProofFacts {
  parts?: unknown;
  publication?: { stagingObjectId?: string };
  evidence?: unknown;
  checkpoint?: unknown;
  staging?: { table: { schema: string; table: string }; objectId: string };
  absence?: {
    table: { schema: string; table: string };
    objectId?: string;
    attached?: { schema: string; table: string };
  };
  dispatch?: { predecessorUuid: string };
  publicationCleanup?: { predecessorUuid: string };
  /** PARTIAL_PROVED's own fact (journal-states.ts RecoveryFacts.continuable): held in no other state. */
  continuable?: unknown;
}

/**
 * What recorded facts prove: the absence proof must name the recorded stage, if one is
 * recorded; an attachment proof must also be a recorded stage the publication receipt names.
 */
export function proofsOf(facts: ProofFacts): TransitionProofs {
  const { staging, absence, publication } = facts;
  const sameStage =
    !staging ||
    (absence?.objectId === staging.objectId &&
      absence.table.schema === staging.table.schema &&
      absence.table.table === staging.table.table);
  const attached = !!absence?.attached;
  const published = !!staging && publication?.stagingObjectId === staging.objectId;
  const stageAbsent = !!absence && sameStage && (!attached || published);
  return {
    partsVerified: !!facts.parts,
    publication: !!publication,
    evidence: !!facts.evidence,
    checkpoint: !!facts.checkpoint,
    stageAbsent,
    ...(attached ? { stageAttached: true } : {}),
    ...(facts.dispatch
      ? {
          exchange: true,
          predecessorRetired: facts.publicationCleanup?.predecessorUuid === facts.dispatch.predecessorUuid,
        }
      : {}),
  };
}

/**
 * The states whose proofs a record in `state` must still carry: the state itself and those
 * on the only path into it (CUSTODY_RELEASED comes through VERIFIED_EOF, PUBLISHED and
 * SUCCEEDED).
 */
const PROVED_ON_THE_WAY: Partial<Record<JournalState, readonly JournalState[]>> = {
  VERIFIED_EOF: ['VERIFIED_EOF'],
  PUBLICATION_UNKNOWN: ['VERIFIED_EOF'],
  PUBLISHED: ['VERIFIED_EOF', 'PUBLISHED'],
  SUCCEEDED: ['VERIFIED_EOF', 'PUBLISHED', 'SUCCEEDED'],
  CUSTODY_RELEASED: ['VERIFIED_EOF', 'PUBLISHED', 'SUCCEEDED', 'CUSTODY_RELEASED'],
  RETIRED: ['RETIRED'],
};

/** Read side of `missingProof`: what a record in `state` lacks of the proofs that let it get there. */
export function proofsLacking(state: JournalState, proofs: TransitionProofs): string[] {
  return (PROVED_ON_THE_WAY[state] ?? [])
    .map((s) => missingProof(s, proofs))
    .filter((m): m is string => m !== undefined);
}
