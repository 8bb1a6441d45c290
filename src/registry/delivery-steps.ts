/**
 * The bounded delivery's steps (deliver-window; begin … verify-eof and evidence, checkpoint,
 * cleanup are publish-clickhouse's too), one per Task in flow order. `delivery-source`: the
 * three steps that open the source (their handlers use lambdaSourceDeps), the only readers
 * of source secrets; every other one opens the target only.
 */
import { CAPSULE, JOURNAL, READ_OBJECTS, WRITE_OBJECTS } from './actions.js';
import { DELIVERY_ERRORS, OBJECT_ERRORS, QUALITY_GATE, TARGET_ERRORS } from './errors.js';
import { DELIVERY_CUT_POINTS as D } from '../delivery/cut-points.js';
import { PUBLICATION_CUT_POINTS } from '../domain/publication/cut-points.js';
import {
  CHECKPOINT_CUTS,
  EVIDENCE_CUTS,
  EXCHANGE_CLEANUP_CUTS,
  PUBLISH_CUTS,
  TRANSACTION_CLEANUP_CUTS,
} from './step-cut-points.js';
import { stepEntry, type StepEntry } from './step-entry.js';

export const DELIVERY_ENTRIES: StepEntry[] = [
  // Checks the source read-only (table, columns) before it takes custody; on an exchange
  // route, the previous operation's capsule of a released slot (a successor's continuity).
  stepEntry({
    handler: 'delivery/begin',
    needs: 'delivery-source',
    load: () => import('../../functions/delivery/begin.js'),
    cutPoints: [D.custodyAcquire],
    table: CAPSULE,
    bucket: READ_OBJECTS,
    errors: [
      ...DELIVERY_ERRORS,
      'Delivery.SourceUnavailable',
      'Quality.SuccessorBlocked',
      'Quality.AuthorityRollback',
      'Quality.AuthorityReplaced',
    ],
    timeoutSeconds: 30,
    memoryMB: 256,
  }),
  stepEntry({
    handler: 'delivery/create-staging',
    needs: 'delivery-target',
    load: () => import('../../functions/delivery/create-staging.js'),
    cutPoints: [D.createStaging, D.stagingRecord],
    table: JOURNAL,
    bucket: [],
    errors: [...DELIVERY_ERRORS, ...TARGET_ERRORS],
    timeoutSeconds: 60,
    memoryMB: 512,
  }),
  // One count query and the plan object; then the writer starts.
  stepEntry({
    handler: 'delivery/plan-parts',
    needs: 'delivery-source',
    load: () => import('../../functions/delivery/plan-parts.js'),
    cutPoints: [D.planPut, D.journalTransition],
    table: JOURNAL,
    bucket: WRITE_OBJECTS,
    errors: [...DELIVERY_ERRORS, ...OBJECT_ERRORS, 'Delivery.SourceForbidden', 'Delivery.SourceUnavailable'],
    timeoutSeconds: 120,
    memoryMB: 512,
  }),
  // The Distributed Map's item: one part, chunk by chunk (memory: three chunks, two loading), resumable.
  stepEntry({
    handler: 'delivery/extract-load-part',
    needs: 'delivery-source',
    load: () => import('../../functions/delivery/extract-load-part.js'),
    cutPoints: {
      transaction: [D.partClaim, D.chunkPut, D.loadChunk, D.partReceipt],
      exchange: [D.partClaim, D.chunkPut, PUBLICATION_CUT_POINTS.loadInsert, D.partReceipt],
    },
    table: JOURNAL,
    bucket: WRITE_OBJECTS,
    errors: [
      ...DELIVERY_ERRORS,
      ...OBJECT_ERRORS,
      ...TARGET_ERRORS,
      'Delivery.SourceForbidden',
      'Delivery.SourceUnavailable',
      // A resume whose journaled chunk object has expired (parts/resume.ts).
      'Delivery.EvidenceExpired',
    ],
    timeoutSeconds: 900,
    memoryMB: 1024,
  }),
  stepEntry({
    handler: 'delivery/verify-eof',
    needs: 'delivery-target',
    load: () => import('../../functions/delivery/verify-eof.js'),
    cutPoints: [D.journalTransition],
    table: JOURNAL,
    bucket: READ_OBJECTS,
    errors: [...DELIVERY_ERRORS, ...OBJECT_ERRORS, ...TARGET_ERRORS],
    timeoutSeconds: 300,
    memoryMB: 512,
  }),
  stepEntry({
    handler: 'delivery/quality',
    needs: 'delivery-target',
    load: () => import('../../functions/delivery/quality.js'),
    cutPoints: [D.journalTransition],
    table: JOURNAL,
    bucket: READ_OBJECTS,
    errors: [...DELIVERY_ERRORS, ...OBJECT_ERRORS, ...TARGET_ERRORS],
    timeoutSeconds: 300,
    memoryMB: 512,
  }),
  stepEntry({
    handler: 'delivery/publish',
    needs: 'delivery-target',
    load: () => import('../../functions/delivery/publish.js'),
    cutPoints: PUBLISH_CUTS,
    table: JOURNAL,
    bucket: [],
    errors: [...DELIVERY_ERRORS, ...TARGET_ERRORS, 'Cutpoint.PublicationRefused'],
    timeoutSeconds: 300,
    memoryMB: 512,
  }),
  // On an exchange route evidence and checkpoint are gated on a COMPLETE capsule
  // (QUALITY_GATE's refusals; evidence reads completion.json).
  stepEntry({
    handler: 'delivery/evidence',
    needs: 'delivery-target',
    load: () => import('../../functions/delivery/evidence.js'),
    cutPoints: EVIDENCE_CUTS,
    table: CAPSULE,
    bucket: WRITE_OBJECTS,
    errors: [...DELIVERY_ERRORS, ...OBJECT_ERRORS, ...TARGET_ERRORS, ...QUALITY_GATE],
    timeoutSeconds: 60,
    memoryMB: 512,
  }),
  stepEntry({
    handler: 'delivery/checkpoint',
    needs: 'delivery-target',
    load: () => import('../../functions/delivery/checkpoint.js'),
    cutPoints: CHECKPOINT_CUTS,
    table: CAPSULE,
    bucket: READ_OBJECTS,
    errors: [...DELIVERY_ERRORS, ...QUALITY_GATE],
    timeoutSeconds: 30,
    memoryMB: 256,
  }),
  stepEntry({
    handler: 'delivery/cleanup',
    needs: 'delivery-target',
    load: () => import('../../functions/delivery/cleanup.js'),
    cutPoints: { transaction: TRANSACTION_CLEANUP_CUTS, exchange: EXCHANGE_CLEANUP_CUTS },
    table: JOURNAL,
    bucket: [],
    errors: [...DELIVERY_ERRORS, ...TARGET_ERRORS],
    timeoutSeconds: 60,
    memoryMB: 512,
  }),
];
