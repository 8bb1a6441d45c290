/**
 * The cut points several registry steps cross (a step's `cutPoints`, step-entry.ts), each
 * group declared once, in the order its use case crosses them. Read off the use cases: the
 * journaled writes (delivery.journal.transition unless a write names its own), the target
 * and ClickHouse adapters' effects, the quality guard and capsule writes.
 */
import { DELIVERY_CUT_POINTS } from '../delivery/cut-points.js';
import { PUBLICATION_CUT_POINTS } from '../domain/publication/cut-points.js';
import { OBSERVATION_CUT_POINTS, QUALITY_CUT_POINTS } from '../domain/quality/cut-points.js';
import { GENERATION_CUT_POINTS } from '../generation/cut-points.js';
import { STREAM_CUT_POINTS } from '../stream/cut-points.js';

const D = DELIVERY_CUT_POINTS;
const P = PUBLICATION_CUT_POINTS;
const Q = QUALITY_CUT_POINTS;
const G = GENERATION_CUT_POINTS;

/** The SQL publication: one target transaction with its receipt, then the journal (PUBLISHED, or PUBLICATION_UNKNOWN). */
export const PUBLISH_CUTS = [D.publishCommit, D.journalTransition];
/** The evidence object, then its journal record. */
export const EVIDENCE_CUTS = [D.evidencePut, D.journalTransition];
/** The checkpoint CAS, then SUCCEEDED in the journal. */
export const CHECKPOINT_CUTS = [D.checkpointAdvance, D.journalTransition];
/** The SQL transaction mode's cleanup: the stage dropped, custody released (a stage not ours: journaled). */
export const TRANSACTION_CLEANUP_CUTS = [D.dropStaging, D.custodyRelease, D.journalTransition];
/** The exchange mode's cleanup: the predecessor dropped by UUID, then the stage, custody released. */
export const EXCHANGE_CLEANUP_CUTS = [P.predecessorDrop, D.dropStaging, D.custodyRelease, D.journalTransition];
/** The owned candidate created and filled from the stage, its identity journaled. */
export const FILL_CANDIDATE_CUTS = [P.candidateCreate, P.candidateFill, D.journalTransition];
/** Staged probes on the candidate, prepared.json, the capsule PREPARED (a failed probe: REEXTRACT_REQUIRED journaled). */
export const PREPARE_CAPSULE_CUTS = [Q.stagedProbe, Q.preparedPut, Q.capsulePrepare, D.journalTransition];
/** The dispatch intent, the one EXCHANGE, one observation by UUID and its commit record. */
export const DISPATCH_CUTS = [P.dispatchIntent, P.exchange, P.observe, P.commitRecord, D.journalTransition];
/** One observation by the bounded reader (ObserveTarget, the operator's observe, resume's), the published generation read by UUID. */
export const OBSERVE_CUTS = [...OBSERVATION_CUT_POINTS, P.observe];
/**
 * Generation 0 of one committed range through the generation-commit mechanism in-process:
 * the task, the WAL object copied, PREPARED, COMMITTED (or a proven abort), the index entry
 * and the lane's mark.
 */
export const GENERATION_0_CUTS = [
  G.taskPut,
  G.objectCopy,
  G.recordPut,
  G.commitCas,
  G.abortCas,
  STREAM_CUT_POINTS.gen0,
];
