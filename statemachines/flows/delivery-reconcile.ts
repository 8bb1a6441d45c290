import { flow } from '../spec/flow.js';
import { stepRetry } from '../spec/retry.js';
import { OPERATOR_ACTION } from '../spec/confirmed.js';
import { onError, task } from '../spec/task.js';
import { recoveryStates } from './recovery.js';

export default flow('delivery-reconcile', {
  Comment:
    "delivery `reconcile` as a Standard flow. Started by an operator with {invocationId, manifestText, selector, yes: true}, or by EventBridge when a deliver-window execution ends FAILED, TIMED_OUT or ABORTED. Observes the target (the publication receipt, or the owned stage per chunk) and journals what it proves: PUBLISHED, VERIFIED_EOF, PARTIAL_PROVED, REEXTRACT_REQUIRED or INCIDENT_RETAINED. Never mutates the target; never opens the source. An automatic reconcile first waits for the target (ProbeTarget, WaitForTarget: at most 6 h by the backoff policy's bound). TimeoutSeconds (9 h) bounds the execution above its worst case: those waits and probes, plus the longest path with every Task's retriers exhausted in turn (each try at the Task's TimeoutSeconds, plus the longest backoffs; throttled tries cost only their backoff), about 8,850 s.",
  TimeoutSeconds: 32400,
  StartAt: 'IsAutomatic',
  States: {
    IsAutomatic: {
      Type: 'Choice',
      Comment:
        'The recovery dispatcher (an EventBridge rule -> functions/recovery/dispatch.ts) starts this flow, once per failed execution, when a deliver-window execution fails, times out or is aborted: {recoveryOf, originalInput}. Automatic reconcile observes only; it never resumes or retires.',
      Choices: [
        {
          Variable: '$.recoveryOf',
          IsPresent: true,
          Next: 'UnwrapFailedDelivery',
        },
      ],
      Default: 'Confirmed',
    },
    UnwrapFailedDelivery: {
      Type: 'Pass',
      Comment: "The failed execution's input (a JSON string in the event) and its ARN.",
      Parameters: {
        'original.$': 'States.StringToJson($.originalInput)',
        'recoveryOf.$': '$.recoveryOf',
      },
      Next: 'Inspect',
    },
    Inspect: task({
      comment:
        "Read-only, no database connection: the failed delivery's invocation (its invocationId, or the one Begin derived from the execution ARN) and its recovery projection. The output replaces the state (no ResultPath): the same {invocationId, manifestText, selector, yes} an operator gives, plus the inspection. The rule stands in for --yes: reconcile only observes the target and journals what it proves.",
      lambda: 'delivery/inspect',
      checksInput: 'delivery-reconcile',
      parameters: {
        'input.$': '$',
      },
      timeoutSeconds: 45,
      retry: stepRetry({ with: ['Delivery.JournalUnavailable'] }),
      catch: [onError('Refused', ['Cutpoint.ValidationError', 'Delivery.JournalUnavailable'])],
      next: 'AfterInspect',
    }),
    AfterInspect: {
      Type: 'Choice',
      Comment:
        "Nothing journaled: the delivery was refused before begin (e.g. Delivery.CustodyHeld). Reconcile only where the state-to-action guide lists it (WRITING_UNKNOWN, PUBLICATION_UNKNOWN); an incident notifies; any other state needs an operator's permitted action and is only reported.",
      Choices: [
        {
          Variable: '$.journaled',
          BooleanEquals: false,
          Next: 'NothingJournaled',
        },
        {
          Variable: '$.inspection.reconcile_permitted',
          BooleanEquals: true,
          Next: 'StartBackoff',
        },
        {
          Variable: '$.inspection.state',
          StringEquals: 'INCIDENT_RETAINED',
          Next: 'NotifyIncident',
        },
      ],
      Default: 'Observed',
    },
    StartBackoff: {
      Type: 'Pass',
      Comment:
        "An automatic reconcile waits for its target (docs/operate.md 'Automatic recovery'): the failure that started it is often the target's outage, still on. No probe made yet.",
      Result: { probes: 0 },
      ResultPath: '$.backoff',
      Next: 'ProbeTarget',
    },
    ProbeTarget: task({
      comment:
        "Read-only: the route's target asked what it is (no custody, nothing journaled). Reachable: reconcile now. Unreachable: the next wait, exponential with jitter, from the backoff policy (the stage's recoveryBackoff), or, with no probe left within its attempts and total time, gaveUp.",
      lambda: 'delivery/probe-target',
      parameters: {
        ...OPERATOR_ACTION,
        'backoff.$': '$.backoff',
      },
      resultPath: '$.backoff',
      timeoutSeconds: 75,
      otherwise: 'Refused',
      next: 'AfterProbe',
    }),
    AfterProbe: {
      Type: 'Choice',
      Choices: [
        { Variable: '$.backoff.reachable', BooleanEquals: true, Next: 'Reconcile' },
        { Variable: '$.backoff.gaveUp', BooleanEquals: true, Next: 'TargetUnreachable' },
      ],
      Default: 'WaitForTarget',
    },
    WaitForTarget: {
      Type: 'Wait',
      Comment: "The wait ProbeTarget chose; then probe again. Bounded by the policy's attempts and total time.",
      SecondsPath: '$.backoff.waitSeconds',
      Next: 'ProbeTarget',
    },
    TargetUnreachable: {
      Type: 'Fail',
      Error: 'Delivery.TargetUnreachable',
      CausePath: '$.backoff.reason',
      Comment:
        'The target stayed unreachable through every probe the policy allows: nothing was journaled or changed; the invocation keeps its state and custody, the dispatcher pages (a recovery stop) and the retained item stays visible in inspect-all. An operator runs reconcile once the target is back.',
    },
    Observed: {
      Type: 'Succeed',
      Comment:
        'Nothing to reconcile: the projection (state, diagnostic_code, permitted_actions) is the output; an operator runs the permitted action.',
      OutputPath: '$.inspection',
    },
    NothingJournaled: {
      Type: 'Succeed',
      Comment:
        'No journal exists for the invocation: the delivery was refused before begin journaled anything (e.g. Delivery.CustodyHeld), so there is nothing to reconcile.',
    },
    ...recoveryStates({
      action: 'reconcile',
      doneComment:
        "Reconciled: the journal holds what the observation proves; the output's projection names the next permitted action (resume or retire).",
    }),
  },
});
