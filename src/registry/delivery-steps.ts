/**
 * The bounded delivery's steps (deliver-window; begin … verify-eof and evidence, checkpoint,
 * cleanup are publish-clickhouse's too), one per Task in flow order. `delivery-source`: the
 * three steps that open the source (their handlers use lambdaSourceDeps), the only readers
 * of source secrets; every other one opens the target only.
 */
import { CAPSULE, JOURNAL, READ_OBJECTS, WRITE_OBJECTS } from './actions.js';
import { DELIVERY_ERRORS, OBJECT_ERRORS, QUALITY_GATE, TARGET_ERRORS } from './errors.js';
import { stepEntry, type StepEntry } from './step-entry.js';

export const DELIVERY_ENTRIES: StepEntry[] = [
  // Checks the source read-only (table, columns) before it takes custody; on an exchange
  // route, the previous operation's capsule of a released slot (a successor's continuity).
  stepEntry({
    handler: 'delivery/begin',
    needs: 'delivery-source',
    load: () => import('../../functions/delivery/begin.js'),
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
    table: JOURNAL,
    bucket: WRITE_OBJECTS,
    errors: [...DELIVERY_ERRORS, ...OBJECT_ERRORS, 'Delivery.SourceForbidden', 'Delivery.SourceUnavailable'],
    timeoutSeconds: 120,
    memoryMB: 512,
  }),
  // The Distributed Map's item: one part, chunk by chunk (memory: one chunk), resumable.
  stepEntry({
    handler: 'delivery/extract-load-part',
    needs: 'delivery-source',
    load: () => import('../../functions/delivery/extract-load-part.js'),
    table: JOURNAL,
    bucket: WRITE_OBJECTS,
    errors: [
      ...DELIVERY_ERRORS,
      ...OBJECT_ERRORS,
      ...TARGET_ERRORS,
      'Delivery.SourceForbidden',
      'Delivery.SourceUnavailable',
    ],
    timeoutSeconds: 900,
    memoryMB: 1024,
  }),
  stepEntry({
    handler: 'delivery/verify-eof',
    needs: 'delivery-target',
    load: () => import('../../functions/delivery/verify-eof.js'),
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
    table: JOURNAL,
    bucket: [],
    errors: [...DELIVERY_ERRORS, ...TARGET_ERRORS],
    timeoutSeconds: 60,
    memoryMB: 512,
  }),
];
