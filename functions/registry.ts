// Longer than ~300 lines on purpose: it is one table (every Task's placeholder, handler,
// IAM actions, errors, timeout and memory), read top to bottom by CDK, the local runner and
// the ASL tests; splitting it per subsystem would hide the one place a reviewer checks grants.
/**
 * The one registry from ASL placeholders to handlers. Each Task's `Resource` in
 * statemachines/*.asl.json is `${<placeholder>}`; CDK turns every entry into one Lambda
 * (definitionSubstitutions, least-privilege grants) and the local runner calls the same
 * handler in-process. Adding a step means adding one entry here.
 */
import { DEFAULT_OBSERVE_DEADLINE_S } from '../src/domain/delivery/manifest-types.js';
import type { Ports } from '../src/ports/index.js';
import { GC_OBJECT_ROOTS, STREAM_GENERATIONS_ROOT } from '../src/stream/gc/model.js';
import type { Notifier } from '../src/ports/notifier.js';
import type { DeliveryDepsProvider } from './lib/delivery-deps.js';
import type { StepHandler } from './lib/step.js';

/** The DynamoDB and S3 actions a step may use; CDK grants exactly these. */
export type TableAction =
  | 'dynamodb:GetItem'
  | 'dynamodb:Query'
  | 'dynamodb:PutItem'
  | 'dynamodb:UpdateItem'
  | 'dynamodb:DeleteItem'
  | 'dynamodb:ConditionCheckItem'
  /** The authority table's binding (TableArn, TableId, CreationDateTime) sealed in the quality core: quality steps only. */
  | 'dynamodb:DescribeTable';
export type BucketAction = 's3:GetObject' | 's3:PutObject' | 's3:DeleteObject' | 's3:ListBucket';
/** Which connection secrets a step reads: the route's source and target, or its target only. */
export type SecretScope = 'source-and-target' | 'target';

export type StepModule =
  | { makeHandler: (ports: () => Promise<Ports>) => StepHandler }
  | { makeDeliveryHandler: (deps: DeliveryDepsProvider) => StepHandler }
  | { makeNotifyHandler: (ports: () => Promise<Ports>, notifier: () => Promise<Notifier>) => StepHandler };

export interface StepEntry {
  /** Placeholder name used in ASL as `${placeholder}`. */
  placeholder: string;
  /** Handler source, relative to the repository root (exports `handler` and `makeHandler`). */
  entry: string;
  /**
   * A step over Ports exports `makeHandler`; a delivery step, which also needs a target,
   * the route and (extraction only) a source, exports `makeDeliveryHandler` over a deps
   * provider; a step that publishes to the incident topic exports `makeNotifyHandler`.
   */
  load: () => Promise<StepModule>;
  table: TableAction[];
  bucket: BucketAction[];
  /** Key prefixes the object actions are limited to; absent: every key of the bucket. */
  objectPrefixes?: readonly string[];
  /** Key prefixes s3:PutObject and s3:DeleteObject are limited to, when narrower than objectPrefixes (reads). */
  writePrefixes?: readonly string[];
  /** With dynamodb:DeleteItem: the partition-key patterns it is limited to (dynamodb:LeadingKeys). */
  deleteLeadingKeys?: readonly string[];
  /**
   * Opens the route's source and/or target (a database): reads their connection secrets
   * (secretsmanager:GetSecretValue) and, with a VPC configured, runs in it. `source-and-target`:
   * the steps whose handler uses lambdaSourceDeps (begin, plan-parts, extract-load-part), the
   * only roles that may read source secrets (`cutpoint/delivery/source/`); `target`: every
   * other step that opens the target (target secrets only, `cutpoint/delivery/target/`).
   * Absent: the step never opens a database (no secret, no VPC).
   */
  readsSecrets?: SecretScope;
  /** Publishes to the incident SNS topic (sns:Publish on that topic only). */
  notifies?: boolean;
  /** Error names the handler raises on purpose; every Task using it must retry or catch each. */
  errors: string[];
  /** Lambda timeout; the Task's TimeoutSeconds in the ASL must exceed it. */
  timeoutSeconds: number;
  memoryMB: number;
}

/*
 * Reading a missing key answers 404 only to a caller that may list the bucket; without
 * s3:ListBucket S3 answers 403, which would hide "absent" from every exact-identity probe,
 * so every step that reads objects also gets s3:ListBucket.
 */

/** Errors any effectful step can raise around a cut point. */
const EFFECT_ERRORS = ['Cutpoint.OutcomeUnknown', 'Cutpoint.EffectFailed', 'Cutpoint.WorkerCrashed'];
const READ = ['dynamodb:GetItem'] satisfies TableAction[];
/** Refusals of stream input before anything is touched. */
const STREAM_REFUSALS = ['Cutpoint.ValidationError', 'Stream.LaneMissing'];
/** A time-marked attempt outside its lane's attempt window (src/domain/attempt-time.ts): refused before anything is written. */
const ATTEMPT_WINDOW_REFUSALS = ['Stream.AttemptExpired', 'Stream.AttemptTimeFuture'];
/** A GC step's refusals: bad input or grace, a missing lane, a store that cannot list in pages. */
const GC_REFUSALS = [...STREAM_REFUSALS, 'Cutpoint.ConfigError'];
/** Partition keys of the stream's generation items (`gen#stream/<stream>/p<partition>/...`). */
const STREAM_GENERATION_KEYS = 'gen#stream/*';
/** Partition keys of every generation root's items (`gen#<root>`): task cleanup deletes task items under them. */
const GENERATION_KEYS = 'gen#*';
/** Partition keys of the lanes' GC items (`gc#<stream>/<partition>`: lifecycle roots, leases) and of the lanes' own items (`lane#<stream>/<partition>`). */
const GC_KEYS = 'gc#*';
const LANE_KEYS = 'lane#*';

/*
 * Every deliver-window step reloads the invocation record (GetItem), may read its journal
 * (Query), and moves it by a fenced conditional write or transaction (PutItem, UpdateItem,
 * ConditionCheckItem). Their refusals: a malformed input or route (ValidationError), a
 * binding whose connection cannot be resolved (ConfigError, `delivery.binding_*`: an
 * unset variable locally, a missing or unreadable secret on AWS), a journal that cannot be
 * read or is in another state, a fence or custody lost to another session, a missing
 * precondition; their effects can end unknown/failed/crashed at a cut point, and a target
 * or source can be unavailable.
 */
const DELIVERY_ERRORS = [
  'Cutpoint.ValidationError',
  'Cutpoint.ConfigError',
  'Cutpoint.IdentityConflict',
  'Delivery.JournalUnavailable',
  'Delivery.JournalStateConflict',
  'Delivery.IllegalTransition',
  'Delivery.TransitionPrecondition',
  'Delivery.Fenced',
  'Delivery.CustodyHeld',
  'Delivery.CustodyNotRetained',
  'Delivery.AuthorityMismatch',
  ...EFFECT_ERRORS,
];
const TARGET_ERRORS = [
  'Cutpoint.TargetUnavailable',
  'Cutpoint.TargetUnobservable',
  'Cutpoint.StagingBindingChanged',
  'Cutpoint.TargetObjectMissing',
];
const OBJECT_ERRORS = ['Cutpoint.ChecksumMismatch', 'Cutpoint.ObjectMissing'];
/** What the COMPLETE-capsule gate of evidence, checkpoint and cleanup on an exchange route refuses with (src/publication/completed-capsule.ts). */
export const QUALITY_GATE = [
  'Quality.EvidenceInvalid',
  'Quality.CapsuleVersionUnsupported',
  'Quality.ReaderGuardHeld',
  'Quality.Failed',
  'Quality.TargetPending',
  'Quality.CompletionEvidencePending',
  'Quality.IllegalCapsuleTransition',
  // The capsule's continuity check (src/quality/capsule-continuity.ts): a restored capsule, another authority table.
  'Quality.AuthorityRollback',
  'Quality.AuthorityReplaced',
];

/** The deliver-window steps that open the source (their handlers use lambdaSourceDeps): the only readers of source secrets. */
const SOURCE_STEPS = ['begin', 'plan-parts', 'extract-load-part'];

function deliverySteps(): StepEntry[] {
  const JOURNAL: TableAction[] = [
    'dynamodb:GetItem',
    'dynamodb:Query',
    'dynamodb:PutItem',
    'dynamodb:UpdateItem',
    'dynamodb:ConditionCheckItem',
  ];
  const READ_OBJECTS: BucketAction[] = ['s3:GetObject', 's3:ListBucket'];
  const WRITE_OBJECTS: BucketAction[] = ['s3:GetObject', 's3:PutObject', 's3:ListBucket'];
  /**
   * The steps that read a capsule on an exchange route check its continuity (src/quality/
   * capsule-continuity.ts): completion.json from the bucket and the authority binding
   * (DescribeTable). Begin reads the previous operation's capsule of a released slot
   * (a successor), evidence and checkpoint the capsule they are gated on.
   */
  const CAPSULE_READERS = ['begin', 'evidence', 'checkpoint'];
  const entry = (
    name: string,
    placeholder: string,
    load: StepEntry['load'],
    bucket: BucketAction[],
    errors: string[],
    timeoutSeconds = 60,
    memoryMB = 512,
  ): StepEntry => ({
    placeholder,
    entry: `functions/delivery/${name}.ts`,
    load,
    table: CAPSULE_READERS.includes(name) ? [...JOURNAL, 'dynamodb:DescribeTable'] : JOURNAL,
    bucket,
    errors: [...DELIVERY_ERRORS, ...errors],
    timeoutSeconds,
    memoryMB,
    readsSecrets: SOURCE_STEPS.includes(name) ? 'source-and-target' : 'target',
  });
  return [
    // Checks the source read-only (table, columns) before it takes custody; on an exchange
    // route, the previous operation's capsule of a released slot (a successor's continuity).
    entry(
      'begin',
      'DeliveryBeginFunctionArn',
      () => import('./delivery/begin.js'),
      READ_OBJECTS,
      [
        'Delivery.SourceUnavailable',
        'Quality.SuccessorBlocked',
        'Quality.AuthorityRollback',
        'Quality.AuthorityReplaced',
      ],
      30,
      256,
    ),
    entry(
      'create-staging',
      'DeliveryCreateStagingFunctionArn',
      () => import('./delivery/create-staging.js'),
      [],
      TARGET_ERRORS,
    ),
    // One count query and the plan object; then the writer starts.
    entry(
      'plan-parts',
      'DeliveryPlanPartsFunctionArn',
      () => import('./delivery/plan-parts.js'),
      WRITE_OBJECTS,
      [...OBJECT_ERRORS, 'Delivery.SourceForbidden', 'Delivery.SourceUnavailable'],
      120,
    ),
    // The Distributed Map's item: one part, chunk by chunk (memory: one chunk), resumable.
    entry(
      'extract-load-part',
      'DeliveryExtractLoadPartFunctionArn',
      () => import('./delivery/extract-load-part.js'),
      WRITE_OBJECTS,
      [...OBJECT_ERRORS, ...TARGET_ERRORS, 'Delivery.SourceForbidden', 'Delivery.SourceUnavailable'],
      900,
      1024,
    ),
    entry(
      'verify-eof',
      'DeliveryVerifyEofFunctionArn',
      () => import('./delivery/verify-eof.js'),
      READ_OBJECTS,
      [...OBJECT_ERRORS, ...TARGET_ERRORS],
      300,
    ),
    entry(
      'quality',
      'DeliveryQualityFunctionArn',
      () => import('./delivery/quality.js'),
      READ_OBJECTS,
      [...OBJECT_ERRORS, ...TARGET_ERRORS],
      300,
    ),
    entry(
      'publish',
      'DeliveryPublishFunctionArn',
      () => import('./delivery/publish.js'),
      [],
      [...TARGET_ERRORS, 'Cutpoint.PublicationRefused'],
      300,
    ),
    // On an exchange route both are gated on a COMPLETE capsule (QUALITY_GATE's refusals; evidence reads completion.json).
    entry('evidence', 'DeliveryEvidenceFunctionArn', () => import('./delivery/evidence.js'), WRITE_OBJECTS, [
      ...OBJECT_ERRORS,
      ...TARGET_ERRORS,
      ...QUALITY_GATE,
    ]),
    entry(
      'checkpoint',
      'DeliveryCheckpointFunctionArn',
      () => import('./delivery/checkpoint.js'),
      READ_OBJECTS,
      QUALITY_GATE,
      30,
      256,
    ),
    entry('cleanup', 'DeliveryCleanupFunctionArn', () => import('./delivery/cleanup.js'), [], TARGET_ERRORS),
  ];
}

/*
 * The recovery flows' steps (delivery-reconcile, -resume, -retire). A live action runs the
 * seed's refusals first (confirmation, id, journal, permitted action, sealed authority),
 * then under a new custody session observes or finishes the invocation source-free:
 * resume reads the staged chunks from S3 and publishes, so it may raise anything a
 * deliver-window step after extraction raises. Its Lambda gets the longest step's timeout.
 */
const RECOVERY_REFUSALS = ['Delivery.ConfirmationRequired', 'Delivery.ActionNotPermitted', 'Delivery.SourceForbidden'];

function recoverySteps(): StepEntry[] {
  const JOURNAL: TableAction[] = [
    'dynamodb:GetItem',
    'dynamodb:Query',
    'dynamodb:PutItem',
    'dynamodb:UpdateItem',
    'dynamodb:ConditionCheckItem',
  ];
  const action = (
    name: string,
    placeholder: string,
    load: StepEntry['load'],
    observes: { table: TableAction[]; errors: string[] } = { table: [], errors: [] },
  ): StepEntry => ({
    placeholder,
    entry: `functions/delivery/${name}.ts`,
    load,
    table: [...JOURNAL, ...observes.table],
    // resume re-reads staged chunks (load, verify) and writes the evidence object.
    bucket: ['s3:GetObject', 's3:PutObject', 's3:ListBucket'],
    errors: [
      ...DELIVERY_ERRORS,
      ...TARGET_ERRORS,
      ...OBJECT_ERRORS,
      'Cutpoint.PublicationRefused',
      ...RECOVERY_REFUSALS,
      ...observes.errors,
    ],
    timeoutSeconds: 900,
    memoryMB: 1024,
    readsSecrets: 'target',
  });
  return [
    {
      placeholder: 'DeliveryInspectFunctionArn',
      entry: 'functions/delivery/inspect.ts',
      load: () => import('./delivery/inspect.js'),
      table: ['dynamodb:GetItem'],
      bucket: [],
      errors: ['Cutpoint.ValidationError', 'Delivery.JournalUnavailable'],
      timeoutSeconds: 30,
      memoryMB: 256,
    },
    action('recover-reconcile', 'DeliveryReconcileFunctionArn', () => import('./delivery/recover-reconcile.js')),
    // On a ClickHouse exchange route resume runs publish-clickhouse's steps: a PUBLISHED
    // operation is observed (the bounded reader, the authority binding: DescribeTable) and
    // the COMPLETE-capsule gate guards evidence, checkpoint and cleanup.
    action('recover-resume', 'DeliveryResumeFunctionArn', () => import('./delivery/recover-resume.js'), {
      table: ['dynamodb:DescribeTable'],
      errors: [
        ...PUBLICATION_ERRORS,
        ...QUALITY_REFUSALS,
        ...QUALITY_STOPS,
        ...QUALITY_GATE.filter((e) => !QUALITY_STOPS.includes(e) && !QUALITY_REFUSALS.includes(e)),
      ],
    }),
    action('recover-retire', 'DeliveryRetireFunctionArn', () => import('./delivery/recover-retire.js')),
    {
      placeholder: 'DeliveryNotifyIncidentFunctionArn',
      entry: 'functions/delivery/notify-incident.ts',
      load: () => import('./delivery/notify-incident.js'),
      table: ['dynamodb:GetItem'],
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
      notifies: true,
    },
  ];
}

/*
 * The ClickHouse publication steps of publish-clickhouse (seed 000), after the shared
 * Begin … VerifyEof: the candidate, the staged quality and the capsule, the ONE EXCHANGE,
 * the bounded target observation, the predecessor's cleanup. The quality steps (and only
 * they) read the authority table's binding (DescribeTable). Their ClickHouse failures leave
 * as Publication.ObservationFailed or a cut point error; no Task retries a ClickHouse class
 * (spec K4): a publication effect is resolved by observation, never by a re-send.
 */
const PUBLICATION_ERRORS = [
  'Publication.ObservationFailed',
  'Publication.CandidateMismatch',
  'Publication.ExchangeUnsupported',
];
/** The governed outcomes that end publish-clickhouse in a named Fail state (never retried). */
export const QUALITY_STOPS = [
  'Quality.TargetPending',
  'Quality.Failed',
  'Quality.Incomplete',
  'Quality.ReaderGuardHeld',
];
const QUALITY_REFUSALS = [
  'Quality.EvidenceInvalid',
  'Quality.AuthorityRollback',
  'Quality.AuthorityReplaced',
  'Quality.GenerationChanged',
  'Quality.CommitUnproven',
  'Quality.CoreDigestMismatch',
  'Quality.ObservationFailed',
  'Quality.CapsuleVersionUnsupported',
];
/**
 * ObserveTarget's time budget (spec §4.4): the route's default observation deadline plus
 * the reserve the handler keeps for revoke, reap and persistence must end before its
 * Lambda's timeout, which ends before the Task's TimeoutSeconds (asserted by the ASL and
 * CDK tests).
 */
/** The operator's observe refuses before anything is written: no --yes, not listed by the guide, not a governed route. */
const OPERATOR_REFUSALS = ['Quality.ConfirmationRequired', 'Quality.ActionNotPermitted', 'Quality.NotGoverned'];
export const OBSERVE_TIMING = {
  deadlineSeconds: DEFAULT_OBSERVE_DEADLINE_S,
  reserveSeconds: 30,
  lambdaSeconds: 300,
} as const;

function publicationSteps(): StepEntry[] {
  const JOURNAL: TableAction[] = [
    'dynamodb:GetItem',
    'dynamodb:Query',
    'dynamodb:PutItem',
    'dynamodb:UpdateItem',
    'dynamodb:ConditionCheckItem',
  ];
  const QUALITY: TableAction[] = [...JOURNAL, 'dynamodb:DescribeTable'];
  const entry = (
    file: string,
    placeholder: string,
    load: StepEntry['load'],
    table: TableAction[],
    bucket: BucketAction[],
    errors: string[],
    timeoutSeconds: number,
  ): StepEntry => ({
    placeholder,
    entry: `functions/${file}.ts`,
    load,
    table,
    bucket,
    errors: [...DELIVERY_ERRORS, ...TARGET_ERRORS, ...PUBLICATION_ERRORS, ...errors],
    timeoutSeconds,
    memoryMB: 512,
    readsSecrets: 'target',
  });
  const EVIDENCE: BucketAction[] = ['s3:GetObject', 's3:PutObject', 's3:ListBucket'];
  return [
    entry(
      'publication/fill-candidate',
      'PublicationFillCandidateFunctionArn',
      () => import('./publication/fill-candidate.js'),
      JOURNAL,
      [],
      [],
      300,
    ),
    // Staged probes on the candidate, prepared.json, the capsule PREPARED with its journal record.
    entry(
      'quality/prepare-capsule',
      'QualityPrepareCapsuleFunctionArn',
      () => import('./quality/prepare-capsule.js'),
      QUALITY,
      EVIDENCE,
      [...OBJECT_ERRORS, ...QUALITY_REFUSALS],
      300,
    ),
    // The dispatch intent, the one EXCHANGE, one observation by UUID.
    entry(
      'publication/dispatch',
      'PublicationDispatchFunctionArn',
      () => import('./publication/dispatch.js'),
      JOURNAL,
      [],
      [],
      120,
    ),
    // The bounded reader (a forked child) under the deadline; its outcome persisted with the guard released.
    entry(
      'quality/observe-target',
      'QualityObserveTargetFunctionArn',
      () => import('./quality/observe-target.js'),
      QUALITY,
      EVIDENCE,
      [...OBJECT_ERRORS, ...QUALITY_REFUSALS, ...QUALITY_STOPS],
      OBSERVE_TIMING.lambdaSeconds,
    ),
    // Drops the predecessor by UUID and the stage, proves absence, releases custody.
    // Only with governance COMPLETE (the capsule gate), so it may raise the gate's refusals.
    entry(
      'publication/cleanup',
      'PublicationCleanupFunctionArn',
      () => import('./publication/cleanup.js'),
      QUALITY,
      ['s3:GetObject', 's3:ListBucket'],
      QUALITY_GATE,
      120,
    ),
    // The flow quality-observe (spec §7): the operator's observation of a PUBLISHED operation
    // (PREPARED / TARGET_PENDING capsule) under a new custody session; the same bounded reader.
    entry(
      'quality/operator-observe',
      'QualityOperatorObserveFunctionArn',
      () => import('./quality/operator-observe.js'),
      QUALITY,
      EVIDENCE,
      [...OBJECT_ERRORS, ...QUALITY_REFUSALS, ...QUALITY_STOPS, ...OPERATOR_REFUSALS],
      OBSERVE_TIMING.lambdaSeconds,
    ),
  ];
}

export const STEPS: StepEntry[] = [
  {
    placeholder: 'RegisterGenerationTaskFunctionArn',
    entry: 'functions/generation/register-task.ts',
    load: () => import('./generation/register-task.js'),
    table: [...READ, 'dynamodb:PutItem'],
    bucket: [],
    errors: ['Cutpoint.ValidationError', 'Cutpoint.IdentityConflict', ...EFFECT_ERRORS],
    timeoutSeconds: 30,
    memoryMB: 256,
  },
  {
    placeholder: 'WriteGenerationObjectFunctionArn',
    entry: 'functions/generation/write-object.ts',
    load: () => import('./generation/write-object.js'),
    table: READ,
    bucket: ['s3:GetObject', 's3:PutObject', 's3:ListBucket'],
    errors: [
      'Cutpoint.ValidationError',
      'Generation.TaskMissing',
      'Generation.TaskClosed',
      'Cutpoint.IdentityConflict',
      'Cutpoint.ChecksumMismatch',
      'Cutpoint.ObjectMissing',
      ...EFFECT_ERRORS,
    ],
    timeoutSeconds: 60,
    // Holds the sources and the output in memory while it hashes them.
    memoryMB: 1024,
  },
  {
    placeholder: 'RecordPreparedGenerationFunctionArn',
    entry: 'functions/generation/record-prepared.ts',
    load: () => import('./generation/record-prepared.js'),
    table: [...READ, 'dynamodb:PutItem', 'dynamodb:ConditionCheckItem'],
    bucket: [],
    errors: [
      'Cutpoint.ValidationError',
      'Generation.TaskMissing',
      'Generation.TaskClosed',
      'Generation.SlotTaken',
      'Generation.Inconsistent',
      'Cutpoint.IdentityConflict',
      ...EFFECT_ERRORS,
    ],
    timeoutSeconds: 30,
    memoryMB: 256,
  },
  {
    placeholder: 'CommitGenerationFunctionArn',
    entry: 'functions/generation/commit.ts',
    load: () => import('./generation/commit.js'),
    table: [...READ, 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
    bucket: ['s3:GetObject', 's3:ListBucket'],
    errors: [
      'Cutpoint.ValidationError',
      'Generation.TaskMissing',
      'Generation.TaskClosed',
      'Generation.SlotTaken',
      'Generation.NotPrepared',
      'Generation.Inconsistent',
      'Cutpoint.ChecksumMismatch',
      'Cutpoint.ObjectMissing',
      ...EFFECT_ERRORS,
    ],
    timeoutSeconds: 30,
    memoryMB: 512,
  },
  {
    placeholder: 'ProbeGenerationFunctionArn',
    entry: 'functions/generation/probe.ts',
    load: () => import('./generation/probe.js'),
    table: READ,
    bucket: [],
    errors: ['Cutpoint.ValidationError', 'Generation.TaskMissing', 'Generation.Inconsistent'],
    timeoutSeconds: 30,
    memoryMB: 256,
  },
  {
    placeholder: 'CleanupGenerationTaskFunctionArn',
    entry: 'functions/generation/cleanup-task.ts',
    load: () => import('./generation/cleanup-task.js'),
    // Task cleanup deletes the committed generation's task item, and nothing else may be deleted.
    table: [...READ, 'dynamodb:DeleteItem'],
    deleteLeadingKeys: [GENERATION_KEYS],
    bucket: ['s3:GetObject', 's3:ListBucket'],
    errors: ['Cutpoint.ValidationError', ...EFFECT_ERRORS],
    timeoutSeconds: 30,
    memoryMB: 512,
  },
  {
    placeholder: 'AbortGenerationFunctionArn',
    entry: 'functions/generation/abort.ts',
    load: () => import('./generation/abort.js'),
    table: [...READ, 'dynamodb:UpdateItem'],
    bucket: [],
    errors: ['Cutpoint.ValidationError', 'Generation.TaskMissing', 'Generation.Inconsistent', ...EFFECT_ERRORS],
    timeoutSeconds: 30,
    memoryMB: 256,
  },

  // ---- stream log (seed 002) ----
  {
    placeholder: 'WriteWalFunctionArn',
    entry: 'functions/stream/write-wal.ts',
    load: () => import('./stream/write-wal.js'),
    table: READ,
    bucket: ['s3:GetObject', 's3:PutObject', 's3:ListBucket'],
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
  },
  {
    placeholder: 'CommitHeadFunctionArn',
    entry: 'functions/stream/commit-head.ts',
    load: () => import('./stream/commit-head.js'),
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
  },
  {
    placeholder: 'SuspendLaneFunctionArn',
    entry: 'functions/stream/suspend-lane.ts',
    load: () => import('./stream/suspend-lane.js'),
    table: [...READ, 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
    bucket: ['s3:GetObject', 's3:ListBucket'],
    errors: [...STREAM_REFUSALS, ...ATTEMPT_WINDOW_REFUSALS, ...EFFECT_ERRORS],
    timeoutSeconds: 15,
    memoryMB: 256,
  },
  {
    placeholder: 'RetireAttemptFunctionArn',
    entry: 'functions/stream/retire-attempt.ts',
    load: () => import('./stream/retire-attempt.js'),
    table: [...READ, 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
    bucket: ['s3:GetObject', 's3:ListBucket'],
    errors: [...STREAM_REFUSALS, ...ATTEMPT_WINDOW_REFUSALS, 'Stream.UnknownSession', ...EFFECT_ERRORS],
    timeoutSeconds: 15,
    memoryMB: 256,
  },
  {
    placeholder: 'WriteIndexFunctionArn',
    entry: 'functions/stream/write-index.ts',
    load: () => import('./stream/write-index.js'),
    table: [...READ, 'dynamodb:PutItem'],
    bucket: ['s3:GetObject', 's3:ListBucket'],
    errors: ['Cutpoint.ValidationError', 'Cutpoint.IdentityConflict', ...EFFECT_ERRORS],
    timeoutSeconds: 30,
    memoryMB: 256,
  },
  {
    placeholder: 'MaterializeGen0FunctionArn',
    entry: 'functions/stream/materialize-gen0.ts',
    load: () => import('./stream/materialize-gen0.js'),
    table: [...READ, 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:ConditionCheckItem'],
    bucket: ['s3:GetObject', 's3:PutObject', 's3:ListBucket'],
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
  },
  {
    placeholder: 'ResolveAppendFunctionArn',
    entry: 'functions/stream/resolve-append.ts',
    load: () => import('./stream/resolve-append.js'),
    table: [...READ, 'dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
    bucket: ['s3:GetObject', 's3:ListBucket'],
    errors: [...STREAM_REFUSALS, ...ATTEMPT_WINDOW_REFUSALS, 'Stream.ResolveInconsistent', ...EFFECT_ERRORS],
    timeoutSeconds: 30,
    memoryMB: 256,
  },
  {
    placeholder: 'TakeoverLaneFunctionArn',
    entry: 'functions/stream/takeover.ts',
    load: () => import('./stream/takeover.js'),
    table: [...READ, 'dynamodb:UpdateItem'],
    bucket: [],
    errors: [...STREAM_REFUSALS, ...EFFECT_ERRORS],
    timeoutSeconds: 30,
    memoryMB: 256,
  },
  {
    placeholder: 'TrimLaneFunctionArn',
    entry: 'functions/stream/trim.ts',
    load: () => import('./stream/trim.js'),
    // ConditionCheckItem: a retention policy's cursors are pinned in the trim's transaction.
    table: [...READ, 'dynamodb:UpdateItem', 'dynamodb:ConditionCheckItem'],
    bucket: [],
    errors: [...STREAM_REFUSALS, 'Stream.TrimBackwards', 'Stream.TrimPastCursor', ...EFFECT_ERRORS],
    timeoutSeconds: 30,
    memoryMB: 256,
  },

  // ---- stream GC (seed 002, Trim and physical delete failures): statemachines/stream-gc.asl.json ----
  {
    placeholder: 'GcScanFunctionArn',
    entry: 'functions/stream/gc-scan.ts',
    load: () => import('./stream/gc-scan.js'),
    table: [...READ, 'dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
    bucket: ['s3:ListBucket', 's3:GetObject'],
    errors: [...GC_REFUSALS, ...EFFECT_ERRORS],
    timeoutSeconds: 120,
    memoryMB: 256,
  },
  {
    placeholder: 'GcMarkFunctionArn',
    entry: 'functions/stream/gc-mark.ts',
    load: () => import('./stream/gc-mark.js'),
    table: [...READ, 'dynamodb:UpdateItem'],
    bucket: [],
    errors: [...GC_REFUSALS, ...EFFECT_ERRORS],
    timeoutSeconds: 120,
    memoryMB: 256,
  },
  {
    placeholder: 'GcDrainFunctionArn',
    entry: 'functions/stream/gc-drain.ts',
    load: () => import('./stream/gc-drain.js'),
    // DeleteItem: GC retention (conditional deletes at the exact version judged, cut point
    // stream.gc.retire): DELETED roots and expired leases (`gc#`), and the collected records
    // and spent markers of attempts past their window (`lane#`: IAM can condition on the
    // partition key only; the code deletes nothing else there).
    table: [...READ, 'dynamodb:Query', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'],
    deleteLeadingKeys: [GC_KEYS, LANE_KEYS],
    bucket: ['s3:ListBucket', 's3:GetObject'],
    errors: [...GC_REFUSALS, ...EFFECT_ERRORS],
    timeoutSeconds: 120,
    memoryMB: 256,
  },
  {
    placeholder: 'GcDeleteFunctionArn',
    entry: 'functions/stream/gc-delete.ts',
    load: () => import('./stream/gc-delete.js'),
    // PutItem: a committed attempt's marker, written before its WAL object is deleted (gc/attempt-record.ts).
    table: [...READ, 'dynamodb:PutItem'],
    bucket: ['s3:ListBucket', 's3:GetObject', 's3:DeleteObject'],
    // The only Lambda that deletes objects: stream WAL objects and stream generations only.
    objectPrefixes: GC_OBJECT_ROOTS,
    errors: [...GC_REFUSALS, ...EFFECT_ERRORS],
    timeoutSeconds: 120,
    memoryMB: 256,
  },
  {
    placeholder: 'GcFinalizeFunctionArn',
    entry: 'functions/stream/gc-finalize.ts',
    load: () => import('./stream/gc-finalize.js'),
    table: [...READ, 'dynamodb:UpdateItem'],
    bucket: ['s3:ListBucket', 's3:GetObject'],
    errors: [...GC_REFUSALS, ...EFFECT_ERRORS],
    timeoutSeconds: 120,
    memoryMB: 256,
  },

  // ---- stream maintenance (issue #11): statemachines/stream-materialize.asl.json, stream-compact.asl.json ----
  {
    placeholder: 'MaterializeGen0BatchFunctionArn',
    entry: 'functions/stream/materialize-batch.ts',
    load: () => import('./stream/materialize-batch.js'),
    // Query: the lane's commit records from its generation-0 mark; the rest is the generation-commit mechanism's.
    table: [
      ...READ,
      'dynamodb:Query',
      'dynamodb:PutItem',
      'dynamodb:UpdateItem',
      'dynamodb:ConditionCheckItem',
      'dynamodb:DeleteItem',
    ],
    // Task cleanup deletes the ranges' generation task items, and nothing else may be deleted.
    deleteLeadingKeys: [STREAM_GENERATION_KEYS],
    bucket: ['s3:ListBucket', 's3:GetObject', 's3:PutObject'],
    // Reads WAL objects (and generations), writes generations 0 only.
    objectPrefixes: GC_OBJECT_ROOTS,
    writePrefixes: [STREAM_GENERATIONS_ROOT],
    errors: ['Cutpoint.ValidationError', ...EFFECT_ERRORS],
    timeoutSeconds: 600,
    memoryMB: 1024,
  },
  {
    placeholder: 'CompactLaneFunctionArn',
    entry: 'functions/stream/compact-lane.ts',
    load: () => import('./stream/compact-lane.js'),
    table: [
      ...READ,
      'dynamodb:Query',
      'dynamodb:PutItem',
      'dynamodb:UpdateItem',
      'dynamodb:ConditionCheckItem',
      'dynamodb:DeleteItem',
    ],
    // Task cleanup deletes the compaction's generation task item, and nothing else may be deleted.
    deleteLeadingKeys: [STREAM_GENERATION_KEYS],
    bucket: ['s3:ListBucket', 's3:GetObject', 's3:PutObject'],
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
  },

  // ---- a flow's execution-input check as a Task of its own: stream-maintain's other Tasks start child flows ----
  {
    placeholder: 'CheckFlowInputFunctionArn',
    entry: 'functions/engine/check-flow-input.ts',
    load: () => import('./engine/check-flow-input.js'),
    table: [],
    bucket: [],
    errors: ['Cutpoint.ValidationError'],
    timeoutSeconds: 10,
    memoryMB: 256,
  },

  // ---- bounded delivery (seed 004), one Task per step in DELIVERY_STEPS order ----
  ...deliverySteps(),
  // ---- ClickHouse publication and quality governance (seed 000): publish-clickhouse's own steps ----
  ...publicationSteps(),
  // ---- delivery recovery (seed 004): inspect, reconcile, resume, retire, incident notice ----
  ...recoverySteps(),
];

export interface FlowEntry {
  /** Flow name: the ASL file is statemachines/<name>.asl.json. */
  name: string;
  type: 'STANDARD' | 'EXPRESS';
  description: string;
  /**
   * STANDARD only: the recovery dispatcher (infra/recovery-dispatch.ts,
   * src/recovery/dispatch.ts) starts flow `by`, once, when an execution of this flow ends
   * in one of `on`, with input `{recoveryOf, originalInput}` (the ASL of `by` must
   * unwrap it). `by` may be the flow itself (a re-run idempotent by exact identity) or a
   * recovery flow that only observes. `by` must classify its designed stops in
   * src/recovery/recovery-stops.ts: a recovery that stops for an operator pages.
   */
  recovery?: { by: string; on: ReadonlyArray<'FAILED' | 'TIMED_OUT' | 'ABORTED'> };
  // The fields an execution input may carry: src/engine/flow-input-fields.ts FLOW_INPUTS,
  // which the first Tasks' Lambdas load without this registry.
}

/** Deliberate stops (ABORTED) are decisions, not failures: re-runs happen only on these. */
const RERUN_ON_FAILURE = ['FAILED', 'TIMED_OUT'] as const;

export const FLOWS: FlowEntry[] = [
  {
    name: 'commit-generation',
    type: 'STANDARD',
    description: 'Write an output object, record a PREPARED generation, commit it by CAS or prove an abort',
    recovery: { by: 'commit-generation', on: RERUN_ON_FAILURE },
  },
  {
    name: 'stream-append',
    type: 'EXPRESS',
    description:
      'Append one record batch to a stream lane: WAL object bound to its offset, one fenced head CAS with the commit record',
  },
  {
    name: 'stream-resolve-append',
    type: 'STANDARD',
    description:
      'Resolve a MAY_HAVE_COMMITTED append from its original attempt, repair what it left, lift the suspension; or every attempt of a LaneWriter that died holding the lane, then release its writer slot',
    recovery: { by: 'stream-resolve-append', on: RERUN_ON_FAILURE },
  },
  {
    name: 'stream-takeover',
    type: 'STANDARD',
    description: 'Take a stream lane over with a new owner session and a higher epoch',
  },
  {
    name: 'stream-trim',
    type: 'STANDARD',
    description: 'Move the trim offset of a stream lane forward by CAS (monotonic); bytes below it stay until GC',
  },
  {
    name: 'stream-gc',
    type: 'STANDARD',
    description:
      "Collect one lane's unreferenced and trimmed objects: lifecycle roots, orphan grace, lease drain, sealed delete journals, exact absence",
  },
  // Off the acknowledged path, so Standard rather than Express: a backlog may outlast
  // Express's 5 minutes, a name starts one execution only, and a failure leaves a history,
  // a status event and the failed-executions alarm; a run is 2-3 transitions.
  {
    name: 'stream-materialize',
    type: 'STANDARD',
    description:
      "Materialize generation 0 of a lane's next committed ranges off the acknowledged path, through the generation-commit mechanism; a failed range is resumed by the next run",
  },
  {
    name: 'stream-compact',
    type: 'STANDARD',
    description:
      "Compact a lane's next run of committed ranges into one generation through the generation-commit mechanism; superseded copies go to GC after grace",
  },
  {
    // After the flows it starts: CDK substitutes their ARNs into its definition.
    name: 'stream-maintain',
    type: 'STANDARD',
    description:
      "Maintain configured stream lanes (the EventBridge schedule's target): per lane stream-materialize, then stream-compact, then stream-gc, each as a child execution",
  },
  {
    name: 'deliver-window',
    type: 'STANDARD',
    description:
      'Deliver one sealed window: custody, staging, chunked extract/load, EOF and quality gates, publish, evidence, checkpoint, cleanup and release',
    // A failed delivery is resolved by the reconcile flow (from the journal), never by a
    // blind re-run; an aborted one too: a Stop Execution can land between any two steps.
    recovery: { by: 'delivery-reconcile', on: ['FAILED', 'TIMED_OUT', 'ABORTED'] },
  },
  {
    name: 'publish-clickhouse',
    type: 'STANDARD',
    description:
      'Publish one sealed window to ClickHouse: custody, stage, chunked extract/load, EOF, candidate, staged quality and capsule, one EXCHANGE, governed target observation, evidence, checkpoint, cleanup and release',
    // As deliver-window: a failed, timed-out or stopped publication is resolved from the
    // journal by the reconcile flow, never re-run (a re-run could never dispatch again anyway).
    recovery: { by: 'delivery-reconcile', on: ['FAILED', 'TIMED_OUT', 'ABORTED'] },
  },
  {
    name: 'quality-observe',
    type: 'STANDARD',
    description:
      "Observe a PUBLISHED ClickHouse operation whose capsule is PREPARED or TARGET_PENDING (the operator's quality observe): guide, seal, a new custody session, the bounded reader; COMPLETE, or TARGET_PENDING / FAILED / INCOMPLETE by name",
  },
  {
    name: 'delivery-reconcile',
    type: 'STANDARD',
    description:
      'Observe the target for a delivery invocation (receipt or owned stage) and journal what it proves; started automatically when deliver-window fails',
  },
  {
    name: 'delivery-resume',
    type: 'STANDARD',
    description: 'Finish a proved delivery invocation to CUSTODY_RELEASED, source-free, never publishing twice',
  },
  {
    name: 'delivery-retire',
    type: 'STANDARD',
    description:
      'Drop exactly the recorded owned stage of a delivery invocation, prove its absence, release custody as RETIRED',
  },
];

export function stepByPlaceholder(placeholder: string): StepEntry {
  const entry = STEPS.find((s) => s.placeholder === placeholder);
  if (!entry) throw new Error(`no registry entry for placeholder \${${placeholder}}`);
  return entry;
}
