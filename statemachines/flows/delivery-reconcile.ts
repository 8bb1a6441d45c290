import { flow } from '../spec/flow.js';
import { stepRetry } from '../spec/retry.js';
import { onError, task } from '../spec/task.js';
import { recoveryStates } from './recovery.js';

export default flow('delivery-reconcile', {
  Comment:
    "delivery `reconcile` as a Standard flow. Started by an operator with {invocationId, manifestText, selector, yes: true}, or by EventBridge when a deliver-window execution ends FAILED, TIMED_OUT or ABORTED. Observes the target (the publication receipt, or the owned stage per chunk) and journals what it proves: PUBLISHED, VERIFIED_EOF, PARTIAL_PROVED, REEXTRACT_REQUIRED or INCIDENT_RETAINED. Never mutates the target; never opens the source. TimeoutSeconds (3 h) bounds the execution above its worst case: the longest path with every Task's retriers exhausted in turn (each try at the Task's TimeoutSeconds, plus the longest backoffs; throttled tries cost only their backoff) is about 8,850 s.",
  TimeoutSeconds: 10800,
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
          Next: 'Reconcile',
        },
        {
          Variable: '$.inspection.state',
          StringEquals: 'INCIDENT_RETAINED',
          Next: 'NotifyIncident',
        },
      ],
      Default: 'Observed',
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
