import type { PublishMode, TableRef } from '../../domain/delivery/target-types.js';
import type { ContinuableFact } from '../../domain/delivery/action-guide.js';

/** Facts: what the journal proved beyond the state. */

export interface StagingFact {
  table: TableRef;
  /** The engine's object id at creation (decimal text). */
  objectId: string;
  /** The owner binding digest stored on the object. */
  owner: string;
}
/**
 * The window's part plan (src/domain/delivery/parts.ts): an immutable object the plan step
 * wrote, and what the journal proves of it. Set once, when the writer starts.
 */
export interface PlanFact {
  /** The plan object's key and hex SHA-256. */
  key: string;
  sha256: string;
  parts: number;
  partRows: number;
}
/**
 * What every part's receipts prove together, recorded by verify-eof with VERIFIED_EOF:
 * per-part receipts live in their own items (src/delivery/parts/), never here, so the
 * invocation item stays the same size whatever the window's size.
 */
export interface PartsFact {
  parts: number;
  chunks: number;
  rows: number;
  bytes: number;
  /** `partsDigest` of the parts' receipt digests: what the publication receipt carries. */
  digest: string;
}
/** The publication receipt as journaled (JSON-safe: instants as canonical ISO text). */
export interface PublicationFact {
  rows: number;
  digest: string;
  /** The published object: the stage's object id (SQL targets), the candidate's UUID (exchange). */
  stagingObjectId: string;
  /** `exchange`: a ClickHouse publication proved by UUID in system.tables (no receipt row). */
  mode: PublishMode | 'exchange';
  publishedAt: string;
}
export interface EvidenceFact {
  key: string;
  sha256: string;
}
/**
 * The owned stage's absence as the target proved it (`dropStaging` ABSENT_PROVED, or no
 * object under the derived name with the schema's metadata visible). `objectId` is the
 * recorded stage's object id; absent when no stage was ever recorded. `attached` when the
 * stage is gone as a stage because it became the target partition the publication receipt
 * names (`dropStaging` ATTACHED): proof for CUSTODY_RELEASED only, never for RETIRED.
 */
export interface AbsenceFact {
  table: TableRef;
  objectId?: string;
  attached?: TableRef;
}
/**
 * A ClickHouse publication's candidate (docs/publication.md, "ClickHouse publication and quality
 * governance"): the owned table the EXCHANGE publishes, by exact identity — its derived
 * UUID and name — filled from the verified stage with `rows` rows whose order-independent
 * digest is `digest`. Set once, before the capsule is prepared.
 */
export interface CandidateFact {
  table: TableRef;
  uuid: string;
  rows: number;
  digest: string;
}
/**
 * The dispatch intent of a ClickHouse publication, journaled BEFORE the one EXCHANGE with
 * VERIFIED_EOF → PUBLICATION_UNKNOWN: from then on the operation counts as dispatched
 * (`count` is 1 forever — a fact is set once), `predecessorUuid` is what the target name
 * held just before, and only the run named here may send the EXCHANGE.
 */
export interface DispatchFact {
  count: 1;
  predecessorUuid: string;
  candidateUuid: string;
  runId: string;
}
/**
 * The end of a ClickHouse publication (recorded with CUSTODY_RELEASED, by the cleanup's
 * release transaction): the predecessor generation P, by the UUID the dispatch recorded,
 * proved absent everywhere, and the capsule retired at `capsuleRetiredAt` by a leg of the
 * same transaction. The journal's rule for CUSTODY_RELEASED requires it on an exchange
 * publication (journal-proofs.ts), as the stage's absence is required on every route.
 */
export interface PublicationCleanupFact {
  predecessorUuid: string;
  capsuleRetiredAt: string;
}
export interface CheckpointFact {
  windowEnd: string;
  /** False when the checkpoint already stood at or past this window's end (never moved back). */
  moved: boolean;
  at: string;
}

export interface DeliveryFacts {
  /** Every owned stage has its exact object id and owner binding recorded (journal-states.ts). */
  ownedStagesRecorded: boolean;
  staging?: StagingFact;
  plan?: PlanFact;
  /** The parts' receipts as verify-eof proved them: required by VERIFIED_EOF. */
  parts?: PartsFact;
  publication?: PublicationFact;
  candidate?: CandidateFact;
  dispatch?: DispatchFact;
  evidence?: EvidenceFact;
  /** The owned stage's proved absence: required by RETIRED and CUSTODY_RELEASED. */
  absence?: AbsenceFact;
  /** An exchange publication's predecessor proved absent and capsule retired: required by its CUSTODY_RELEASED. */
  publicationCleanup?: PublicationCleanupFact;
  /** Set only by advanceCheckpoint. */
  checkpoint?: CheckpointFact;
  /**
   * PARTIAL_PROVED only (action-guide.ts RecoveryFacts.continuable): set with the
   * transition into it, dropped by every transition out of it (transition.ts).
   */
  continuable?: ContinuableFact;
}

/**
 * Facts a step records. Scalars are set once (recording the same value again is a no-op,
 * a different value is contradicting evidence: `delivery.fact_conflict`).
 * `ownedStagesRecorded` may only turn true.
 */
export type FactsPatch = Partial<Omit<DeliveryFacts, 'checkpoint'>>;
