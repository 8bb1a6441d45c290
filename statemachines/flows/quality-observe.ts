import { confirmed, OPERATOR_ACTION } from '../spec/confirmed.js';
import { flow } from '../spec/flow.js';
import { onError, task } from '../spec/task.js';
import { notifyIncidentTask } from '../spec/incident.js';

export default flow('quality-observe', {
  Comment:
    "`cutpoint quality observe <id> --manifest F#R --yes --aws` (docs/publication.md; docs/rules.md#bounded-reader) as a Standard flow. Input: {invocationId, manifestText, selector, yes: true} — the exact manifest text and `file#route` the operation sealed, and the confirmation --yes gives. The operator's observation of a PUBLISHED ClickHouse operation whose capsule is PREPARED or TARGET_PENDING: the action guide, the whole seal rechecked with the target's identity, custody for a new session (epoch + 1), then the same governed observation as publish-clickhouse's ObserveTarget (reader guard, the published generation checked, the original probes by the bounded reader under the deadline, the outcome persisted with the guard released). COMPLETE ends Observed with the inspect projection and the observation; TARGET_PENDING, FAILED, INCOMPLETE and a reader guard already held end in their named Fail states (all but TARGET_PENDING after NotifyIncident). Never dispatches, never reads the source, never clears a guard. TimeoutSeconds (90 min) bounds the execution above its worst case: the longest path with every Task's retriers exhausted in turn (each try at the Task's TimeoutSeconds, plus the longest backoffs; throttled tries cost only their backoff) is about 3,400 s.",
  TimeoutSeconds: 5400,
  StartAt: 'Confirmed',
  States: {
    Confirmed: confirmed({
      next: 'Observe',
      comment:
        "A live action needs explicit confirmation (`yes: true`, the CLI's --yes). Without it the flow fails here with Quality.ConfirmationRequired (quality.confirmation_required) before any Task runs: the manifest is not parsed, no secret is read, nothing is touched.",
    }),
    ConfirmationRequired: {
      Type: 'Fail',
      Error: 'Quality.ConfirmationRequired',
      Cause:
        'quality.confirmation_required: observe changes quality authority; start it again with "yes": true to confirm',
      Comment: 'Refused before any Task: nothing was read or mutated.',
    },
    Observe: task({
      comment:
        "The operator's observation (src/quality/operator-observe.ts, the same use case as the CLI's): each refusal (guide: quality.action_not_permitted, or Quality.ReaderGuardHeld when the guide refuses because a reader guard is held — then NotifyIncident reports the guard, which may be this execution's own earlier attempt killed after its acquire; seal: delivery.recovery_authority_mismatch; custody) writes nothing. The bounded reader is this Lambda's own bundle re-run as a child; deadline + reserve < the Lambda's timeout < this TimeoutSeconds. An unproved outcome (INCOMPLETE, also a timeout once its retries are spent) is never retried into a pass. Cut points: quality.reader.acquire, quality.target.probe, quality.worker.reap, quality.pending.commit, quality.complete.commit, quality.failed.commit, quality.completion.put, quality.completion.record.",
      lambda: 'quality/operator-observe',
      checksInput: 'quality-observe',
      parameters: OPERATOR_ACTION,
      resultPath: '$.result',
      timeoutSeconds: 315,
      catch: [
        onError('QualityTargetPending', ['Quality.TargetPending'], '$.stop'),
        onError('NotifyIncident', ['Quality.Failed'], '$.stop'),
        onError(
          'NotifyIncident',
          [
            'Quality.Incomplete',
            'States.Timeout',
            'Sandbox.Timedout',
            'Lambda.Unknown',
            'Cutpoint.WorkerCrashed',
            'Cutpoint.OutcomeUnknown',
            'Cutpoint.EffectFailed',
          ],
          '$.stop',
        ),
        onError('NotifyIncident', ['Quality.ReaderGuardHeld'], '$.stop'),
      ],
      otherwise: 'Refused',
      next: 'Observed',
    }),
    Observed: {
      Type: 'Succeed',
      Comment:
        'COMPLETE: the inspect projection (cutpoint.quality-governance.v1) with observation {outcome, remote_termination}; resume carries the operation on (evidence, checkpoint, cleanup, release).',
      OutputPath: '$.result',
    },
    QualityTargetPending: {
      Type: 'Fail',
      Error: 'Quality.TargetPending',
      CausePath: '$.stop.Cause',
      Comment:
        'The observation ended TARGET_PENDING (persisted, guard released): the publication stays proven, governance is unfinished; observe again later.',
    },
    NotifyIncident: notifyIncidentTask({
      flow: 'quality-observe',
      invocationId: '$.invocationId',
      comment:
        'As in publish-clickhouse (a FAILED capsule notifies the incident topic): publishes to the incident SNS topic only what the authority proves — a capsule FAILED, or a reader guard still held after the observation gave up (INCOMPLETE) — built from the journal and the capsule, never from this payload; otherwise nothing. A failure to notify never hides the stop.',
    }),
    AfterIncident: {
      Type: 'Choice',
      Comment: 'The stop that was caught decides the Fail state.',
      Choices: [
        {
          Variable: '$.stop.Error',
          StringEquals: 'Quality.Failed',
          Next: 'QualityFailed',
        },
        {
          Variable: '$.stop.Error',
          StringEquals: 'Quality.ReaderGuardHeld',
          Next: 'ReaderGuardHeld',
        },
      ],
      Default: 'QualityIncomplete',
    },
    QualityFailed: {
      Type: 'Fail',
      Error: 'Quality.Failed',
      CausePath: '$.stop.Cause',
      Comment:
        'A required probe failed on the published generation: the capsule is FAILED, terminal; preserve the evidence and escalate.',
    },
    QualityIncomplete: {
      Type: 'Fail',
      Error: 'Quality.Incomplete',
      CausePath: '$.stop.Cause',
      Comment:
        "The observation's outcome is not proved (or the step timed out): the guard may be kept; follow the quiescence procedure, inspect before anything else.",
    },
    ReaderGuardHeld: {
      Type: 'Fail',
      Error: 'Quality.ReaderGuardHeld',
      CausePath: '$.stop.Cause',
      Comment:
        "Another reader holds the capsule's non-expiring reader guard: nothing was done. Reached through NotifyIncident: the holder may be a live run, or a crashed one (this execution's own earlier attempt, killed after the acquire; found by the deterministic scheduler) whose guard nothing else will ever report, so the incident topic hears of a guard still held. There is no force-clear; follow the quiescence procedure of the runbook.",
    },
    Refused: {
      Type: 'Fail',
      ErrorPath: '$.failure.Error',
      CausePath: '$.failure.Cause',
      Comment:
        "A refusal (input, guide, seal, custody, fence, target, evidence): the step's own stable error name and message; nothing was mutated by the refused part.",
    },
  },
});
