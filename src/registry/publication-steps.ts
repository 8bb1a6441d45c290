/**
 * The ClickHouse publication steps of publish-clickhouse, after the shared Begin …
 * VerifyEof: the candidate, the staged quality and the capsule, the ONE EXCHANGE, the
 * bounded target observation, the predecessor's cleanup; and the operator's observation
 * (quality-observe), and the read-only replay and diagnosis (quality-replay,
 * quality-diagnose). The quality steps read the authority table's binding (CAPSULE:
 * DescribeTable).
 */
import { DEFAULT_OBSERVE_DEADLINE_S } from '../domain/delivery/manifest-types.js';
import { CAPSULE, CAPSULE_READ, JOURNAL, READ_OBJECTS, WRITE_OBJECTS } from './actions.js';
import {
  DELIVERY_ERRORS,
  OBJECT_ERRORS,
  OPERATOR_REFUSALS,
  PUBLICATION_ERRORS,
  QUALITY_GATE,
  QUALITY_REFUSALS,
  QUALITY_READ_REFUSALS,
  QUALITY_STOPS,
  TARGET_ERRORS,
} from './errors.js';
import { DELIVERY_CUT_POINTS } from '../delivery/cut-points.js';
import { PUBLICATION_CUT_POINTS } from '../domain/publication/cut-points.js';
import { QUALITY_CUT_POINTS } from '../domain/quality/cut-points.js';
import {
  DISPATCH_CUTS,
  EXCHANGE_CLEANUP_CUTS,
  FILL_CANDIDATE_CUTS,
  OBSERVE_CUTS,
  PREPARE_CAPSULE_CUTS,
} from './step-cut-points.js';
import { stepEntry, type StepEntry } from './step-entry.js';

/**
 * ObserveTarget's time budget: the route's default observation deadline plus the reserve
 * the handler keeps for revoke, reap and persistence must end before its Lambda's
 * timeout, which ends before the Task's TimeoutSeconds (asserted by the ASL and CDK tests).
 */
export const OBSERVE_TIMING = {
  deadlineSeconds: DEFAULT_OBSERVE_DEADLINE_S,
  reserveSeconds: 30,
  lambdaSeconds: 300,
} as const;

/** What every publication step may raise: a journal step's, the target's, the publication's. */
const PUBLICATION_STEP_ERRORS = [...DELIVERY_ERRORS, ...TARGET_ERRORS, ...PUBLICATION_ERRORS];

export const PUBLICATION_ENTRIES: StepEntry[] = [
  stepEntry({
    handler: 'publication/fill-candidate',
    needs: 'delivery-target',
    load: () => import('../../functions/publication/fill-candidate.js'),
    cutPoints: FILL_CANDIDATE_CUTS,
    table: JOURNAL,
    bucket: [],
    errors: PUBLICATION_STEP_ERRORS,
    timeoutSeconds: 300,
    memoryMB: 512,
  }),
  // Staged probes on the candidate, prepared.json, the capsule PREPARED with its journal record.
  stepEntry({
    handler: 'quality/prepare-capsule',
    needs: 'delivery-target',
    load: () => import('../../functions/quality/prepare-capsule.js'),
    cutPoints: PREPARE_CAPSULE_CUTS,
    table: CAPSULE,
    bucket: WRITE_OBJECTS,
    errors: [...PUBLICATION_STEP_ERRORS, ...OBJECT_ERRORS, ...QUALITY_REFUSALS],
    timeoutSeconds: 300,
    memoryMB: 512,
  }),
  // The dispatch intent, the one EXCHANGE, one observation by UUID.
  stepEntry({
    handler: 'publication/dispatch',
    needs: 'delivery-target',
    load: () => import('../../functions/publication/dispatch.js'),
    cutPoints: DISPATCH_CUTS,
    table: JOURNAL,
    bucket: [],
    errors: PUBLICATION_STEP_ERRORS,
    timeoutSeconds: 120,
    memoryMB: 512,
  }),
  // The bounded reader (a forked child) under the deadline; its outcome persisted with the guard released.
  stepEntry({
    handler: 'quality/observe-target',
    needs: 'delivery-target',
    load: () => import('../../functions/quality/observe-target.js'),
    cutPoints: OBSERVE_CUTS,
    table: CAPSULE,
    bucket: WRITE_OBJECTS,
    errors: [...PUBLICATION_STEP_ERRORS, ...OBJECT_ERRORS, ...QUALITY_REFUSALS, ...QUALITY_STOPS],
    timeoutSeconds: OBSERVE_TIMING.lambdaSeconds,
    memoryMB: 512,
  }),
  // Drops the predecessor by UUID and the stage, proves absence, releases custody.
  // Only with governance COMPLETE (the capsule gate), so it may raise the gate's refusals.
  stepEntry({
    handler: 'publication/cleanup',
    needs: 'delivery-target',
    load: () => import('../../functions/publication/cleanup.js'),
    cutPoints: EXCHANGE_CLEANUP_CUTS,
    table: CAPSULE,
    bucket: READ_OBJECTS,
    errors: [...PUBLICATION_STEP_ERRORS, ...QUALITY_GATE],
    timeoutSeconds: 120,
    memoryMB: 512,
  }),
  // The flow quality-observe: the operator's observation of a PUBLISHED operation
  // (PREPARED / TARGET_PENDING capsule) under a new custody session; the same bounded reader.
  stepEntry({
    handler: 'quality/operator-observe',
    needs: 'delivery-target',
    load: () => import('../../functions/quality/operator-observe.js'),
    cutPoints: [DELIVERY_CUT_POINTS.custodyAcquire, ...OBSERVE_CUTS],
    table: CAPSULE,
    bucket: WRITE_OBJECTS,
    errors: [...PUBLICATION_STEP_ERRORS, ...OBJECT_ERRORS, ...QUALITY_REFUSALS, ...QUALITY_STOPS, ...OPERATOR_REFUSALS],
    timeoutSeconds: OBSERVE_TIMING.lambdaSeconds,
    memoryMB: 512,
  }),
  // The flows quality-replay and quality-diagnose: `quality replay|diagnose` in a Lambda,
  // read-only (no write action at all: the use cases see the stores through readOnlyPorts).
  // Replay reads its evidence at quality.replay.read and the target's system.tables at
  // publication.observe; the diagnosis crosses no cut point (its reads are not effects).
  stepEntry({
    handler: 'quality/replay',
    needs: 'delivery-target',
    load: () => import('../../functions/quality/replay.js'),
    cutPoints: [QUALITY_CUT_POINTS.replayRead, PUBLICATION_CUT_POINTS.observe],
    table: CAPSULE_READ,
    bucket: READ_OBJECTS,
    errors: [...PUBLICATION_STEP_ERRORS, ...OBJECT_ERRORS, ...QUALITY_REFUSALS, ...QUALITY_READ_REFUSALS],
    timeoutSeconds: 60,
    memoryMB: 512,
  }),
  stepEntry({
    handler: 'quality/diagnose',
    needs: 'delivery-target',
    load: () => import('../../functions/quality/diagnose.js'),
    cutPoints: [],
    table: CAPSULE_READ,
    bucket: READ_OBJECTS,
    errors: [...PUBLICATION_STEP_ERRORS, ...OBJECT_ERRORS, ...QUALITY_REFUSALS, ...QUALITY_READ_REFUSALS],
    timeoutSeconds: 60,
    memoryMB: 512,
  }),
];
