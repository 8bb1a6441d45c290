import { CARRIED_STATE } from '../spec/delivery.js';
import { flow } from '../spec/flow.js';
import { onError, task } from '../spec/task.js';
import { notifyIncidentTask } from '../spec/incident.js';
import { evidenceAndCheckpoint, WINDOW_FAILS, windowStart } from './window.js';

/** Where publish-clickhouse's stops go: through NotifyIncident (it publishes what the authority proves), then the stop's own Fail state. */
const NEEDS_RECOVERY = onError('NotifyIncident', ['Delivery.NeedsRecovery'], '$.stop');
/** The stops of the steps gated on the capsule: TARGET_PENDING ends the flow without an incident. */
const GOVERNED_STOPS = [
  NEEDS_RECOVERY,
  onError('QualityTargetPending', ['Quality.TargetPending'], '$.stop'),
  onError('NotifyIncident', ['Quality.Failed'], '$.stop'),
  onError('NotifyIncident', ['Quality.ReaderGuardHeld'], '$.stop'),
];

export default flow('publish-clickhouse', {
  Comment:
    "Publish one bounded window ClickHouse -> ClickHouse by ONE EXCHANGE TABLES (docs/publication.md), one Task per step: begin, create-staging, plan-parts and the same Distributed Map as deliver-window (extract-load-part once per part), verify-eof, then fill-candidate (the owned candidate of the derived UUID, filled from the verified stage), prepare-capsule (staged probes on the candidate; pass: prepared.json and the capsule PREPARED with its journal record), dispatch (the dispatch intent journaled, the one EXCHANGE, one observation by UUID: PUBLISHED, or PUBLICATION_UNKNOWN for reconcile), observe-target (the bounded reader under the deadline; COMPLETE, or the flow ends in a named Fail state: Quality.TargetPending, Quality.Failed, Quality.Incomplete, Quality.ReaderGuardHeld), evidence, checkpoint, cleanup (the predecessor dropped by UUID and the stage, absence proved, custody released with the capsule's retirement). As deliver-window, every step acts only from its journaled state carried in `$.delivery.known`; a step that leaves a state only reconcile resolves throws Delivery.NeedsRecovery and the Catch ends the flow. No Task retries a ClickHouse error class or States.ALL: a publication effect is resolved by observation, never re-sent. Begin refuses a SQL route (publication.sql_route_refused) before custody. Cut points (all in `cutpoint faults list`): delivery.custody.acquire, delivery.target.create-staging, delivery.staging.record, delivery.plan.put, delivery.part.claim, delivery.chunk.put, delivery.target.load-chunk, delivery.part.receipt, publication.candidate.create, publication.candidate.fill, quality.staged.probe, quality.prepared.put, quality.capsule.prepare, publication.dispatch.intent, publication.exchange, publication.observe, quality.reader.acquire, quality.target.probe, quality.worker.reap, quality.complete.commit, delivery.evidence.put, delivery.checkpoint.advance, publication.predecessor.drop, delivery.custody.release, and delivery.journal.transition for every other journal write. TimeoutSeconds (24 h) bounds the execution: the fixed steps' worst case (every retrier exhausted in turn, each try at the Task's TimeoutSeconds, plus the longest backoffs; throttled tries cost only their backoff) is about 18,800 s, one wave of parts (max_concurrency at once) about 7,600 s more, so a day holds the fixed steps and at least eight worst-case waves; a window that needs more is split by raising part_rows or max_concurrency. A timed-out execution is reconciled by the recovery dispatcher like a failed one.",
  TimeoutSeconds: 86400,
  StartAt: 'Begin',
  States: {
    ...windowStart({
      flow: 'publish-clickhouse',
      beginComment:
        "Step 1: custody of the target by CAS and the sealed authority (window resolved once, here), one transaction, before any source I/O. Another invocation holding the target is Delivery.CustodyHeld (nothing written). Cut point: delivery.custody.acquire. Input: the execution input {manifestText, selector} with optional invocationId and session (defaults: derived from the execution id and name, which the Parameters take from the context object). The target's identity is observed, the work root derived from the bucket. The flow's name travels in the Task parameters (`flow`), never in the execution input: a route that is not `mode: exchange` is refused here (Cutpoint.ValidationError, publication.sql_route_refused) before custody is taken.",
      stops: [NEEDS_RECOVERY],
      afterVerify: 'FillCandidate',
    }),
    FillCandidate: task({
      comment:
        "ClickHouse publication 1: create the owned candidate `<stage>_c` (the target's exact schema, UUID derived from the invocation, owner marker as COMMENT) and fill it from the verified stage by one deduplicated INSERT … SELECT, then journal its identity, rows and digest (still VERIFIED_EOF). Idempotent by exact identity. Cut points: publication.candidate.create, publication.candidate.fill, delivery.journal.transition.",
      lambda: 'publication/fill-candidate',
      parameters: CARRIED_STATE,
      resultPath: '$.delivery',
      timeoutSeconds: 315,
      catch: [NEEDS_RECOVERY],
      otherwise: 'StepRefused',
      next: 'PrepareCapsule',
    }),
    PrepareCapsule: task({
      comment:
        "Staged quality (docs/publication.md): the route's original probes, read-only on the exact candidate. All pass: prepared.json written once and the capsule created PREPARED in the same transaction as its journal record. A failed probe: VERIFIED_EOF -> REEXTRACT_REQUIRED, never dispatched (Delivery.NeedsRecovery). Cut points: quality.staged.probe, quality.prepared.put, quality.capsule.prepare.",
      lambda: 'quality/prepare-capsule',
      parameters: CARRIED_STATE,
      resultPath: '$.delivery',
      timeoutSeconds: 315,
      catch: [NEEDS_RECOVERY],
      otherwise: 'StepRefused',
      next: 'Dispatch',
    }),
    Dispatch: task({
      comment:
        'The ONE EXCHANGE of the operation: the dispatch intent (count 1, predecessor P, candidate C) journaled VERIFIED_EOF -> PUBLICATION_UNKNOWN with the capsule held, the EXCHANGE sent only by the call that applied the intent, then one observation by UUID: COMMIT_PROVEN -> PUBLISHED, CONTRADICTED -> INCIDENT_RETAINED, anything else stays PUBLICATION_UNKNOWN and the flow stops for reconcile. A retry only observes, never sends a second EXCHANGE; its Retry names no ClickHouse error class. Cut points: publication.dispatch.intent, publication.exchange, publication.observe.',
      lambda: 'publication/dispatch',
      parameters: CARRIED_STATE,
      resultPath: '$.delivery',
      timeoutSeconds: 135,
      catch: [NEEDS_RECOVERY],
      otherwise: 'StepRefused',
      next: 'ObserveTarget',
    }),
    ObserveTarget: task({
      comment:
        "Governed target observation (docs/rules.md#bounded-reader): the reader guard taken on the capsule, the published generation checked (UUID C, our marker, the prepared core), the original probes run by a bounded reader process under the deadline (route deadline + reserve < the Lambda's timeout < this TimeoutSeconds), the outcome persisted with the guard released. COMPLETE continues; TARGET_PENDING, FAILED, an unproved outcome (INCOMPLETE, also after a timeout once its retries are spent) or a guard another reader holds end the flow in their named Fail states, never retried into a pass. Cut points: quality.reader.acquire, quality.target.probe, quality.worker.reap, quality.pending.commit, quality.complete.commit, quality.failed.commit, quality.completion.put, quality.completion.record.",
      lambda: 'quality/observe-target',
      parameters: CARRIED_STATE,
      resultPath: '$.delivery',
      timeoutSeconds: 315,
      catch: [
        ...GOVERNED_STOPS,
        onError(
          'NotifyIncident',
          ['Quality.Incomplete', 'States.Timeout', 'Sandbox.Timedout', 'Lambda.Unknown'],
          '$.stop',
        ),
      ],
      otherwise: 'StepRefused',
      next: 'Evidence',
    }),
    ...evidenceAndCheckpoint(
      GOVERNED_STOPS,
      ' On an exchange route only with the capsule COMPLETE: a TARGET_PENDING or FAILED capsule or a held reader guard ends the flow in its named Fail state; missing or invalid completion evidence is refused.',
    ),
    Cleanup: task({
      comment:
        "The last step: drop the predecessor generation P by exact UUID (now under the candidate's name) and the stage, prove both absent, release custody SUCCEEDED -> CUSTODY_RELEASED with the capsule's retirement, in one transaction. Unproved absence: Delivery.CleanupUnproved, custody retained. Cut points: publication.predecessor.drop, delivery.custody.release.",
      lambda: 'publication/cleanup',
      parameters: CARRIED_STATE,
      resultPath: '$.delivery',
      timeoutSeconds: 135,
      catch: [
        NEEDS_RECOVERY,
        onError('CleanupNotProved', ['Delivery.CleanupUnproved'], '$.stop'),
        ...GOVERNED_STOPS.slice(1),
      ],
      otherwise: 'StepRefused',
    }),
    NotifyIncident: notifyIncidentTask({
      flow: 'publish-clickhouse',
      invocationId: '$.delivery.invocationId',
      comment:
        'Every stop that may be an incident passes here (a FAILED capsule notifies the incident topic): the step publishes to the incident SNS topic only what the authority proves — a journal in INCIDENT_RETAINED, a capsule FAILED, or a reader guard still held after the observation gave up (INCOMPLETE) — built from the journal and the capsule, never from this payload (names and states only: no values, UUIDs, token or target names); otherwise it publishes nothing. Then the stop ends in its own named Fail state. A failure to notify never hides the stop.',
    }),
    AfterIncident: {
      Type: 'Choice',
      Comment:
        'The stop that was caught decides the Fail state (its error name is what EventBridge and the CLI route on).',
      Choices: [
        {
          Variable: '$.stop.Error',
          StringEquals: 'Quality.Failed',
          Next: 'QualityFailed',
        },
        {
          Or: [
            {
              Variable: '$.stop.Error',
              StringEquals: 'Quality.Incomplete',
            },
            {
              Variable: '$.stop.Error',
              StringEquals: 'States.Timeout',
            },
            {
              Variable: '$.stop.Error',
              StringEquals: 'Sandbox.Timedout',
            },
            {
              Variable: '$.stop.Error',
              StringEquals: 'Lambda.Unknown',
            },
          ],
          Next: 'QualityIncomplete',
        },
        {
          Variable: '$.stop.Error',
          StringEquals: 'Quality.ReaderGuardHeld',
          Next: 'ReaderGuardHeld',
        },
      ],
      Default: 'StoppedForRecovery',
    },
    ...WINDOW_FAILS,
    QualityTargetPending: {
      Type: 'Fail',
      Error: 'Quality.TargetPending',
      CausePath: '$.stop.Cause',
      Comment:
        'Published (target_commit proven) with governance pending: the capsule is TARGET_PENDING and blocks any successor. A later identical invocation may observe again (cutpoint quality observe); never a second EXCHANGE.',
    },
    QualityFailed: {
      Type: 'Fail',
      Error: 'Quality.Failed',
      CausePath: '$.stop.Cause',
      Comment:
        'A required probe failed on the published generation: the capsule is FAILED, no automatic repair; preserve the evidence and escalate.',
    },
    QualityIncomplete: {
      Type: 'Fail',
      Error: 'Quality.Incomplete',
      CausePath: '$.stop.Cause',
      Comment:
        "The observation's outcome is not proved (pending persistence, worker shutdown or guard release uncertain, or the step timed out): the fence or its unknown outcome remains; inspect before anything else.",
    },
    ReaderGuardHeld: {
      Type: 'Fail',
      Error: 'Quality.ReaderGuardHeld',
      CausePath: '$.stop.Cause',
      Comment:
        "Another reader holds the capsule's non-expiring reader guard: nothing was done. Reached through NotifyIncident: the holder may be a live run, or a crashed one (this execution's own earlier attempt, killed after the acquire) whose guard nothing else will ever report, so the incident topic hears of a guard still held. There is no force-clear; follow the quiescence procedure of the runbook.",
    },
  },
});
