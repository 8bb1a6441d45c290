import { flow } from '../spec/flow.js';
import { stepRetry } from '../spec/retry.js';
import { onError, task } from '../spec/task.js';

export default flow('delivery-reconcile', {
  Comment: 'delivery `reconcile` (seed 004) as a Standard flow. Started by an operator with {invocationId, manifestText, selector, yes: true}, or by EventBridge when a deliver-window execution ends FAILED, TIMED_OUT or ABORTED. Observes the target (the publication receipt, or the owned stage per chunk) and journals what it proves: PUBLISHED, VERIFIED_EOF, PARTIAL_PROVED, REEXTRACT_REQUIRED or INCIDENT_RETAINED. Never mutates the target; never opens the source. TimeoutSeconds (3 h) bounds the execution above its worst case: the longest path with every Task\'s retriers exhausted in turn (each try at the Task\'s TimeoutSeconds, plus the longest backoffs; throttled tries cost only their backoff) is about 8,850 s.',
  TimeoutSeconds: 10800,
  StartAt: 'IsAutomatic',
  States: {
    IsAutomatic: {
      Type: 'Choice',
      Comment: 'The recovery dispatcher (an EventBridge rule -> functions/recovery/dispatch.ts) starts this flow, once per failed execution, when a deliver-window execution fails, times out or is aborted: {recoveryOf, originalInput}. Automatic reconcile observes only; it never resumes or retires.',
      Choices: [
        {
          Variable: '$.recoveryOf',
          IsPresent: true,
          Next: 'UnwrapFailedDelivery',
        },
      ],
      Default: 'Confirmed',
    },
    Confirmed: {
      Type: 'Choice',
      Comment: 'seed 004: a live action needs explicit confirmation (`yes: true`, the CLI\'s --yes). Without it the flow fails here with Delivery.ConfirmationRequired (delivery.recovery_confirmation_required) before any Task runs: the manifest is not parsed, no secret is read, nothing is touched.',
      Choices: [
        {
          And: [
            {
              Variable: '$.yes',
              IsPresent: true,
            },
            {
              Variable: '$.yes',
              IsBoolean: true,
            },
            {
              Variable: '$.yes',
              BooleanEquals: true,
            },
          ],
          Next: 'Reconcile',
        },
      ],
      Default: 'ConfirmationRequired',
    },
    ConfirmationRequired: {
      Type: 'Fail',
      Error: 'Delivery.ConfirmationRequired',
      Cause: 'delivery.recovery_confirmation_required: reconcile changes target custody; start it again with "yes": true to confirm',
      Comment: 'Refused before any Task: nothing was read or mutated.',
    },
    UnwrapFailedDelivery: {
      Type: 'Pass',
      Comment: 'The failed execution\'s input (a JSON string in the event) and its ARN.',
      Parameters: {
        'original.$': 'States.StringToJson($.originalInput)',
        'recoveryOf.$': '$.recoveryOf',
      },
      Next: 'Inspect',
    },
    Inspect: task({
      comment: 'Read-only, no database connection: the failed delivery\'s invocation (its invocationId, or the one Begin derived from the execution ARN) and its recovery projection. The output replaces the state (no ResultPath): the same {invocationId, manifestText, selector, yes} an operator gives, plus the inspection. The rule stands in for --yes: reconcile only observes the target and journals what it proves.',
      lambda: 'DeliveryInspect',
      timeoutSeconds: 45,
      retry: stepRetry({ with: ['Delivery.JournalUnavailable'] }),
      catch: [
        onError('Refused', ['Cutpoint.ValidationError', 'Delivery.JournalUnavailable']),
      ],
      next: 'AfterInspect',
    }),
    AfterInspect: {
      Type: 'Choice',
      Comment: 'Nothing journaled: the delivery was refused before begin (e.g. Delivery.CustodyHeld). Reconcile only where the state-to-action guide lists it (WRITING_UNKNOWN, PUBLICATION_UNKNOWN); an incident notifies; any other state needs an operator\'s permitted action and is only reported.',
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
      Comment: 'Nothing to reconcile: the projection (state, diagnostic_code, permitted_actions) is the output; an operator runs the permitted action.',
      OutputPath: '$.inspection',
    },
    NothingJournaled: {
      Type: 'Succeed',
      Comment: 'No journal exists for the invocation: the delivery was refused before begin journaled anything (e.g. Delivery.CustodyHeld), so there is nothing to reconcile.',
    },
    Reconcile: task({
      comment: 'seed 004 `reconcile`: a new recovery session takes custody (epoch + 1, so any zombie of an older epoch is fenced out), after the state-to-action guide, the confirmation (`yes`) and the sealed authority (manifest, selector, bindings, the target\'s observed identity, the work root) are rechecked; any refusal mutates nothing. A retained outcome is returned, not thrown.',
      lambda: 'DeliveryReconcile',
      parameters: {
        'invocationId.$': '$.invocationId',
        'manifestText.$': '$.manifestText',
        'selector.$': '$.selector',
        'yes.$': '$.yes',
      },
      resultPath: '$.result',
      timeoutSeconds: 915,
      otherwise: 'Refused',
      next: 'AfterReconcile',
    }),
    AfterReconcile: {
      Type: 'Choice',
      Comment: 'Route on the journal state the action reached.',
      Choices: [
        {
          Variable: '$.result.state',
          StringEquals: 'INCIDENT_RETAINED',
          Next: 'NotifyIncident',
        },
        {
          Variable: '$.result.retained',
          BooleanEquals: true,
          Next: 'Retained',
        },
      ],
      Default: 'Done',
    },
    Done: {
      Type: 'Succeed',
      Comment: 'Reconciled: the journal holds what the observation proves; the output\'s projection names the next permitted action (resume or retire).',
      OutputPath: '$.result',
    },
    Retained: {
      Type: 'Fail',
      Error: 'Delivery.RecoveryRetained',
      CausePath: '$.result.reason',
      Comment: 'The action ended short of its goal; the state is journaled and custody is retained. `cutpoint delivery inspect` names the next permitted action.',
    },
    NotifyIncident: task({
      comment: 'A retained incident: publish the invocation\'s recovery projection (state, diagnostic code, permitted actions; never journal content or credentials) to the incident SNS topic, then fail.',
      lambda: 'DeliveryNotifyIncident',
      parameters: {
        'invocationId.$': '$.invocationId',
        flow: 'reconcile',
        'execution.$': '$$.Execution.Id',
      },
      resultPath: '$.notice',
      timeoutSeconds: 45,
      otherwise: 'IncidentRetained',
      next: 'IncidentRetained',
    }),
    IncidentRetained: {
      Type: 'Fail',
      Error: 'Delivery.IncidentRetained',
      Cause: 'the journal holds INCIDENT_RETAINED: custody is retained until an operator resolves the contradicting evidence; the incident topic was notified',
      Comment: 'Terminal for automation: nothing retries or resumes an incident.',
    },
    Refused: {
      Type: 'Fail',
      ErrorPath: '$.failure.Error',
      CausePath: '$.failure.Cause',
      Comment: 'A refusal before or during the action (confirmation, id, journal, permitted action, sealed authority, fence, target): the step\'s own stable error name and message; nothing was mutated by the refused part.',
    },
  },
});
