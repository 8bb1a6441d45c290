/**
 * The delivery recovery flows' steps (delivery-reconcile, -resume, -retire): inspect, the
 * three actions and the incident notice. A live action runs its refusals first
 * (confirmation, id, journal, permitted action, sealed authority), then under a new custody
 * session observes or finishes the invocation source-free: resume reads the staged chunks
 * from S3 and publishes, so it may raise anything a deliver-window step after extraction
 * raises. Its Lambda gets the longest step's timeout. Besides them: delivery-expire's page,
 * which deletes finished invocations' work objects past retention.
 */
import { CAPSULE, JOURNAL, READ, WRITE_OBJECTS } from './actions.js';
import {
  DELIVERY_ERRORS,
  EFFECT_ERRORS,
  OBJECT_ERRORS,
  PUBLICATION_ERRORS,
  QUALITY_GATE,
  QUALITY_REFUSALS,
  QUALITY_STOPS,
  RECOVERY_REFUSALS,
  TARGET_ERRORS,
} from './errors.js';
import { DELIVERY_CUT_POINTS as D } from '../delivery/cut-points.js';
import { RELEASED_PK } from '../delivery/journal/keys.js';
import { WORK_OBJECT_GRANTS } from '../domain/delivery/work-objects.js';
import { PUBLICATION_CUT_POINTS as P } from '../domain/publication/cut-points.js';
import {
  CHECKPOINT_CUTS,
  DISPATCH_CUTS,
  EVIDENCE_CUTS,
  EXCHANGE_CLEANUP_CUTS,
  FILL_CANDIDATE_CUTS,
  OBSERVE_CUTS,
  PREPARE_CAPSULE_CUTS,
  PUBLISH_CUTS,
  TRANSACTION_CLEANUP_CUTS,
} from './step-cut-points.js';
import { stepEntry, type StepEntry } from './step-entry.js';

/** What every recovery action may raise. */
const ACTION_ERRORS = [
  ...DELIVERY_ERRORS,
  ...TARGET_ERRORS,
  ...OBJECT_ERRORS,
  'Cutpoint.PublicationRefused',
  ...RECOVERY_REFUSALS,
];

/**
 * Resume under a new custody session: a SQL route's publication from the stage, or a
 * ClickHouse route's candidate, capsule, one dispatch and observation; then the end. From a
 * continuable PARTIAL_PROVED, first the unfinished parts (continue).
 */
const RESUME_CUTS = [
  D.custodyAcquire,
  // A continue: the unfinished parts extracted and loaded, as the Map's item (a SQL route's
  // load; a ClickHouse route's continue loads by INSERT, publication.load.insert, which no
  // reach scenario drives yet).
  D.journalTransition,
  D.partClaim,
  D.chunkPut,
  D.loadChunk,
  D.partReceipt,
  ...PUBLISH_CUTS,
  ...FILL_CANDIDATE_CUTS,
  ...PREPARE_CAPSULE_CUTS,
  ...DISPATCH_CUTS,
  ...OBSERVE_CUTS,
  ...EVIDENCE_CUTS,
  ...CHECKPOINT_CUTS,
  ...TRANSACTION_CLEANUP_CUTS,
  ...EXCHANGE_CLEANUP_CUTS,
];

export const RECOVERY_ENTRIES: StepEntry[] = [
  stepEntry({
    handler: 'delivery/inspect',
    needs: 'ports',
    load: () => import('../../functions/delivery/inspect.js'),
    cutPoints: [],
    table: READ,
    bucket: [],
    errors: ['Cutpoint.ValidationError', 'Delivery.JournalUnavailable'],
    timeoutSeconds: 30,
    memoryMB: 256,
  }),
  stepEntry({
    handler: 'delivery/recover-reconcile',
    needs: 'delivery-target',
    load: () => import('../../functions/delivery/recover-reconcile.js'),
    cutPoints: [D.custodyAcquire, D.journalTransition, P.observe, P.commitRecord, P.fenceRename],
    table: JOURNAL,
    // resume re-reads staged chunks (load, verify) and writes the evidence object; every action gets the same.
    bucket: WRITE_OBJECTS,
    errors: ACTION_ERRORS,
    timeoutSeconds: 900,
    memoryMB: 1024,
  }),
  // On a ClickHouse exchange route resume runs publish-clickhouse's steps: a PUBLISHED
  // operation is observed (the bounded reader, the authority binding: CAPSULE) and the
  // COMPLETE-capsule gate guards evidence, checkpoint and cleanup.
  // Resume's continue of a PARTIAL_PROVED (src/delivery/recovery/continue.ts) hands the
  // unfinished parts to the flow's Map: the part Task reads the source, this step never.
  stepEntry({
    handler: 'delivery/recover-resume',
    needs: 'delivery-target',
    load: () => import('../../functions/delivery/recover-resume.js'),
    cutPoints: RESUME_CUTS,
    table: CAPSULE,
    bucket: WRITE_OBJECTS,
    errors: [
      ...ACTION_ERRORS,
      ...PUBLICATION_ERRORS,
      ...QUALITY_REFUSALS,
      ...QUALITY_STOPS,
      ...QUALITY_GATE.filter((e) => !QUALITY_STOPS.includes(e) && !QUALITY_REFUSALS.includes(e)),
      'Delivery.EvidenceExpired',
    ],
    timeoutSeconds: 900,
    memoryMB: 1024,
  }),
  stepEntry({
    handler: 'delivery/recover-retire',
    needs: 'delivery-target',
    load: () => import('../../functions/delivery/recover-retire.js'),
    cutPoints: [D.custodyAcquire, D.stagingRecord, P.observe, P.predecessorDrop, D.dropStaging, D.custodyRelease],
    table: JOURNAL,
    bucket: WRITE_OBJECTS,
    errors: ACTION_ERRORS,
    timeoutSeconds: 900,
    memoryMB: 1024,
  }),
  // The automatic reconcile's gate: the route's target asked what it is (read-only, no
  // authority item, no object); unreachable is its result, not an error (probe-target.ts).
  stepEntry({
    handler: 'delivery/probe-target',
    needs: 'delivery-target',
    load: () => import('../../functions/delivery/probe-target.js'),
    cutPoints: [],
    table: [],
    bucket: [],
    errors: ['Cutpoint.ValidationError', 'Cutpoint.ConfigError', 'Cutpoint.TargetUnobservable'],
    timeoutSeconds: 60,
    memoryMB: 256,
  }),
  // delivery-expire: reads the released index and each finished invocation's record, deletes
  // its work objects (never its evidence: the grant names the work objects' keys) and its entry.
  stepEntry({
    handler: 'delivery/expire',
    needs: 'ports',
    load: () => import('../../functions/delivery/expire.js'),
    cutPoints: [D.expireDelete, D.expireForget],
    table: [...READ, 'dynamodb:Query', 'dynamodb:DeleteItem'],
    deleteLeadingKeys: [RELEASED_PK],
    bucket: ['s3:ListBucket', 's3:DeleteObject'],
    objectPrefixes: WORK_OBJECT_GRANTS,
    errors: ['Cutpoint.ValidationError', 'Cutpoint.ConfigError', 'Delivery.JournalUnavailable', ...EFFECT_ERRORS],
    timeoutSeconds: 120,
    memoryMB: 256,
  }),
  stepEntry({
    handler: 'delivery/notify-incident',
    needs: 'ports-notifier',
    load: () => import('../../functions/delivery/notify-incident.js'),
    cutPoints: [],
    table: READ,
    bucket: [],
    errors: [
      'Cutpoint.ValidationError',
      'Cutpoint.ConfigError',
      'Delivery.JournalUnavailable',
      'Cutpoint.EffectFailed',
      'Cutpoint.OutcomeUnknown',
    ],
    timeoutSeconds: 30,
    memoryMB: 256,
  }),
];
