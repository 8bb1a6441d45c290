/**
 * The stream log's steps: append (stream-append), resolve, takeover and trim, GC
 * (stream-gc) and maintenance (stream-materialize, stream-compact).
 */
import { GC_OBJECT_ROOTS, STREAM_GENERATIONS_ROOT } from '../stream/gc/model.js';
import {
  GC_KEYS,
  LANE_KEYS,
  LIST_OBJECTS,
  READ,
  READ_OBJECTS,
  STREAM_GENERATION_KEYS,
  WRITE_OBJECTS,
} from './actions.js';
import { ATTEMPT_WINDOW_REFUSALS, EFFECT_ERRORS, GC_REFUSALS, OBJECT_ERRORS, STREAM_REFUSALS } from './errors.js';
import { GENERATION_CUT_POINTS } from '../generation/cut-points.js';
import { COMPACTION_RUN_CUT_POINTS } from '../stream/compaction/cut-points.js';
import { STREAM_CUT_POINTS as S } from '../stream/cut-points.js';
import { GC_CUT_POINTS as GC } from '../stream/gc/cut-points.js';
import { GENERATION_0_CUTS } from './step-cut-points.js';
import { stepEntry, type StepEntry } from './step-entry.js';

/** stream-append, stream-resolve-append, stream-takeover, stream-trim. */
export const STREAM_LOG_ENTRIES: StepEntry[] = [
  stepEntry({
    handler: 'stream/write-wal',
    needs: 'ports',
    load: () => import('../../functions/stream/write-wal.js'),
    cutPoints: [S.wal, S.suspend],
    table: READ,
    bucket: WRITE_OBJECTS,
    errors: [
      ...STREAM_REFUSALS,
      ...ATTEMPT_WINDOW_REFUSALS,
      'Stream.LaneSuspended',
      'Stream.Fenced',
      'Stream.AttemptAborted',
      'Stream.UnknownSession',
      'Stream.AttemptIdentityConflict',
      'Cutpoint.IdentityConflict',
      ...EFFECT_ERRORS,
    ],
    timeoutSeconds: 15,
    memoryMB: 512,
  }),
  stepEntry({
    handler: 'stream/commit-head',
    needs: 'ports',
    load: () => import('../../functions/stream/commit-head.js'),
    cutPoints: [S.suspend, S.headCas],
    table: [...READ, 'dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
    bucket: [],
    errors: [
      ...STREAM_REFUSALS,
      ...ATTEMPT_WINDOW_REFUSALS,
      'Stream.LaneSuspended',
      'Stream.Fenced',
      'Stream.AttemptAborted',
      'Stream.AttemptIdentityConflict',
      ...EFFECT_ERRORS,
    ],
    timeoutSeconds: 15,
    memoryMB: 256,
  }),
  stepEntry({
    handler: 'stream/suspend-lane',
    needs: 'ports',
    load: () => import('../../functions/stream/suspend-lane.js'),
    cutPoints: [S.suspend, S.retire],
    table: [...READ, 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
    bucket: READ_OBJECTS,
    errors: [...STREAM_REFUSALS, ...ATTEMPT_WINDOW_REFUSALS, ...EFFECT_ERRORS],
    timeoutSeconds: 15,
    memoryMB: 256,
  }),
  stepEntry({
    handler: 'stream/retire-attempt',
    needs: 'ports',
    load: () => import('../../functions/stream/retire-attempt.js'),
    cutPoints: [S.retire],
    table: [...READ, 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
    bucket: READ_OBJECTS,
    errors: [...STREAM_REFUSALS, ...ATTEMPT_WINDOW_REFUSALS, 'Stream.UnknownSession', ...EFFECT_ERRORS],
    timeoutSeconds: 15,
    memoryMB: 256,
  }),
  stepEntry({
    handler: 'stream/write-index',
    needs: 'ports',
    load: () => import('../../functions/stream/write-index.js'),
    cutPoints: [S.index],
    table: [...READ, 'dynamodb:PutItem'],
    bucket: READ_OBJECTS,
    errors: ['Cutpoint.ValidationError', 'Cutpoint.IdentityConflict', ...EFFECT_ERRORS],
    timeoutSeconds: 30,
    memoryMB: 256,
  }),
  stepEntry({
    handler: 'stream/materialize-gen0',
    needs: 'ports',
    load: () => import('../../functions/stream/materialize-gen0.js'),
    cutPoints: GENERATION_0_CUTS,
    table: [...READ, 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:ConditionCheckItem'],
    bucket: WRITE_OBJECTS,
    errors: [
      'Cutpoint.ValidationError',
      'Cutpoint.IdentityConflict',
      'Generation.TaskMissing',
      'Generation.NotPrepared',
      'Generation.Inconsistent',
      ...EFFECT_ERRORS,
    ],
    timeoutSeconds: 60,
    memoryMB: 1024,
  }),
  stepEntry({
    handler: 'stream/resolve-append',
    needs: 'ports',
    load: () => import('../../functions/stream/resolve-append.js'),
    cutPoints: [S.resolveFence, S.unsuspend, S.writerRelease],
    table: [...READ, 'dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
    bucket: READ_OBJECTS,
    errors: [...STREAM_REFUSALS, ...ATTEMPT_WINDOW_REFUSALS, 'Stream.ResolveInconsistent', ...EFFECT_ERRORS],
    timeoutSeconds: 30,
    memoryMB: 256,
  }),
  stepEntry({
    handler: 'stream/takeover',
    needs: 'ports',
    load: () => import('../../functions/stream/takeover.js'),
    cutPoints: [S.takeoverCas],
    table: [...READ, 'dynamodb:UpdateItem'],
    bucket: [],
    errors: [...STREAM_REFUSALS, ...EFFECT_ERRORS],
    timeoutSeconds: 30,
    memoryMB: 256,
  }),
  stepEntry({
    handler: 'stream/trim',
    needs: 'ports',
    load: () => import('../../functions/stream/trim.js'),
    cutPoints: [S.trimCas],
    // ConditionCheckItem: a retention policy's cursors are pinned in the trim's transaction.
    table: [...READ, 'dynamodb:UpdateItem', 'dynamodb:ConditionCheckItem'],
    bucket: [],
    errors: [...STREAM_REFUSALS, 'Stream.TrimBackwards', 'Stream.TrimPastCursor', ...EFFECT_ERRORS],
    timeoutSeconds: 30,
    memoryMB: 256,
  }),
];

/** stream-gc (Trim and physical delete failures). */
export const STREAM_GC_ENTRIES: StepEntry[] = [
  stepEntry({
    handler: 'stream/gc-scan',
    needs: 'ports',
    load: () => import('../../functions/stream/gc-scan.js'),
    cutPoints: [GC.root, GC.mark],
    table: [...READ, 'dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
    bucket: LIST_OBJECTS,
    errors: [...GC_REFUSALS, ...EFFECT_ERRORS],
    timeoutSeconds: 120,
    memoryMB: 256,
  }),
  stepEntry({
    handler: 'stream/gc-mark',
    needs: 'ports',
    load: () => import('../../functions/stream/gc-mark.js'),
    cutPoints: [GC.mark],
    table: [...READ, 'dynamodb:UpdateItem'],
    bucket: [],
    errors: [...GC_REFUSALS, ...EFFECT_ERRORS],
    timeoutSeconds: 120,
    memoryMB: 256,
  }),
  stepEntry({
    handler: 'stream/gc-drain',
    needs: 'ports',
    load: () => import('../../functions/stream/gc-drain.js'),
    cutPoints: [GC.mark, GC.seal, GC.retention],
    // DeleteItem: GC retention (conditional deletes at the exact version judged, cut point
    // stream.gc.retire): DELETED roots and expired leases (`gc#`), and the collected records
    // and spent markers of attempts past their window (`lane#`: IAM can condition on the
    // partition key only; the code deletes nothing else there).
    table: [...READ, 'dynamodb:Query', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'],
    deleteLeadingKeys: [GC_KEYS, LANE_KEYS],
    bucket: LIST_OBJECTS,
    errors: [...GC_REFUSALS, ...EFFECT_ERRORS],
    timeoutSeconds: 120,
    memoryMB: 256,
  }),
  stepEntry({
    handler: 'stream/gc-delete',
    needs: 'ports',
    load: () => import('../../functions/stream/gc-delete.js'),
    cutPoints: [GC.evidence, GC.send, GC.mark, GC.delete],
    // PutItem: a committed attempt's marker, written before its WAL object is deleted (gc/attempt-record.ts).
    table: [...READ, 'dynamodb:PutItem'],
    bucket: [...LIST_OBJECTS, 's3:DeleteObject'],
    // The only Lambda that deletes objects: stream WAL objects and stream generations only.
    objectPrefixes: GC_OBJECT_ROOTS,
    errors: [...GC_REFUSALS, ...EFFECT_ERRORS],
    timeoutSeconds: 120,
    memoryMB: 256,
  }),
  stepEntry({
    handler: 'stream/gc-finalize',
    needs: 'ports',
    load: () => import('../../functions/stream/gc-finalize.js'),
    cutPoints: [GC.finalize],
    table: [...READ, 'dynamodb:UpdateItem'],
    bucket: LIST_OBJECTS,
    errors: [...GC_REFUSALS, ...EFFECT_ERRORS],
    timeoutSeconds: 120,
    memoryMB: 256,
  }),
];

/** The generation-commit mechanism's table actions, plus the task cleanup's DeleteItem. */
const GENERATION_COMMIT = [
  ...READ,
  'dynamodb:Query',
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:ConditionCheckItem',
  'dynamodb:DeleteItem',
] as const;

/** stream-materialize and stream-compact (off the acknowledged path). */
export const STREAM_MAINTENANCE_ENTRIES: StepEntry[] = [
  stepEntry({
    handler: 'stream/materialize-batch',
    needs: 'ports',
    load: () => import('../../functions/stream/materialize-batch.js'),
    cutPoints: [...GENERATION_0_CUTS, GENERATION_CUT_POINTS.taskCleanup],
    // Query: the lane's commit records from its generation-0 mark; the rest is the generation-commit mechanism's.
    table: GENERATION_COMMIT,
    // Task cleanup deletes the ranges' generation task items, and nothing else may be deleted.
    deleteLeadingKeys: [STREAM_GENERATION_KEYS],
    bucket: [...LIST_OBJECTS, 's3:PutObject'],
    // Reads WAL objects (and generations), writes generations 0 only.
    objectPrefixes: GC_OBJECT_ROOTS,
    writePrefixes: [STREAM_GENERATIONS_ROOT],
    errors: ['Cutpoint.ValidationError', ...EFFECT_ERRORS],
    timeoutSeconds: 600,
    memoryMB: 1024,
  }),
  stepEntry({
    handler: 'stream/compact-lane',
    needs: 'ports',
    load: () => import('../../functions/stream/compact-lane.js'),
    cutPoints: [...COMPACTION_RUN_CUT_POINTS, GENERATION_CUT_POINTS.abortCas],
    table: GENERATION_COMMIT,
    // Task cleanup deletes the compaction's generation task item, and nothing else may be deleted.
    deleteLeadingKeys: [STREAM_GENERATION_KEYS],
    bucket: [...LIST_OBJECTS, 's3:PutObject'],
    // Reads WAL objects and generations, writes the compacted generation only.
    objectPrefixes: GC_OBJECT_ROOTS,
    writePrefixes: [STREAM_GENERATIONS_ROOT],
    errors: [
      ...STREAM_REFUSALS,
      'Cutpoint.IdentityConflict',
      'Stream.CompactionNotCommitted',
      ...OBJECT_ERRORS,
      ...EFFECT_ERRORS,
    ],
    timeoutSeconds: 300,
    memoryMB: 1024,
  }),
];
