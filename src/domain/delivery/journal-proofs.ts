import type { JournalState } from './journal-states.js';

/*
 * The proofs a journal state requires (seed 004: "Evidence is persisted before checkpoint
 * advancement, and cleanup happens before custody release"; retire "proves their absence,
 * and then releases custody"), as one rule for both sides: the journal's transition write
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
 *   before cleanup is proved.
 */
export interface TransitionProofs {
  partsVerified: boolean;
  publication: boolean;
  evidence: boolean;
  checkpoint: boolean;
  stageAbsent: boolean;
}

/** The proof `to` lacks, as a sentence; undefined when the journal may enter it. */
export function missingProof(to: JournalState, proofs: TransitionProofs): string | undefined {
  switch (to) {
    case 'VERIFIED_EOF':
      return proofs.partsVerified ? undefined : "VERIFIED_EOF needs the parts' verified receipts (rows, chunks, digest) recorded in the same or an earlier transition";
    case 'PUBLISHED':
      return proofs.publication ? undefined : 'PUBLISHED needs the publication receipt recorded in the same or an earlier transition';
    case 'SUCCEEDED':
      return proofs.evidence && proofs.checkpoint ? undefined : 'SUCCEEDED needs the evidence persisted and the checkpoint advanced first';
    case 'CUSTODY_RELEASED':
      return proofs.stageAbsent ? undefined : "CUSTODY_RELEASED needs the owned stage's absence proved (cleanup) first; custody stays held";
    case 'RETIRED':
      return proofs.stageAbsent ? undefined : "RETIRED needs the owned stage's absence proved in the same or an earlier transition; custody stays held";
    default:
      return undefined;
  }
}

/** The journal facts a proof is read from (src/delivery/journal/facts.ts `DeliveryFacts`, in part). */
export interface ProofFacts {
  parts?: unknown;
  publication?: unknown;
  evidence?: unknown;
  checkpoint?: unknown;
  staging?: { table: { schema: string; table: string }; objectId: string };
  absence?: { table: { schema: string; table: string }; objectId?: string };
}

/** What recorded facts prove: the absence proof must name the recorded stage, if one is recorded. */
export function proofsOf(facts: ProofFacts): TransitionProofs {
  const { staging, absence } = facts;
  const sameStage =
    !staging || (absence?.objectId === staging.objectId && absence.table.schema === staging.table.schema && absence.table.table === staging.table.table);
  return { partsVerified: !!facts.parts, publication: !!facts.publication, evidence: !!facts.evidence, checkpoint: !!facts.checkpoint, stageAbsent: !!absence && sameStage };
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
  return (PROVED_ON_THE_WAY[state] ?? []).map((s) => missingProof(s, proofs)).filter((m): m is string => m !== undefined);
}
