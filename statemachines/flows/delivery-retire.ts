import { flow } from '../spec/flow.js';
import { task } from '../spec/task.js';

export default flow('delivery-retire', {
  Comment: 'delivery `retire` (seed 004) as a Standard flow. Input: {invocationId, manifestText, selector, yes: true} — the exact manifest text and `file#route` the invocation sealed, and the confirmation the CLI\'s --yes gives. Drops exactly the recorded owned stage (lock, recheck object id and owner binding, drop, prove absence) — in EMPTY_STAGING with no recorded stage, the stage found under its derived name with this invocation\'s owner marker, journaled first — and releases custody as RETIRED; a publication receipt for the invocation, probed first and again under the publication lock inside the drop transaction, is contradicting evidence (INCIDENT_RETAINED, nothing dropped); an unprovable absence keeps state and custody. The checkpoint never moves. Repeating it after an outage is safe: every step reloads the journal. TimeoutSeconds (3 h) bounds the execution above its worst case: the longest path with every Task\'s retriers exhausted in turn (each try at the Task\'s TimeoutSeconds, plus the longest backoffs; throttled tries cost only their backoff) is about 8,200 s.',
  TimeoutSeconds: 10800,
  StartAt: 'Confirmed',
  States: {
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
          Next: 'Retire',
        },
      ],
      Default: 'ConfirmationRequired',
    },
    ConfirmationRequired: {
      Type: 'Fail',
      Error: 'Delivery.ConfirmationRequired',
      Cause: 'delivery.recovery_confirmation_required: retire changes target custody; start it again with "yes": true to confirm',
      Comment: 'Refused before any Task: nothing was read or mutated.',
    },
    Retire: task({
      comment: 'seed 004 `retire`: a new recovery session takes custody (epoch + 1, so any zombie of an older epoch is fenced out), after the state-to-action guide, the confirmation (`yes`) and the sealed authority (manifest, selector, bindings, the target\'s observed identity, the work root) are rechecked; any refusal mutates nothing. A retained outcome is returned, not thrown.',
      lambda: 'DeliveryRetire',
      parameters: {
        'invocationId.$': '$.invocationId',
        'manifestText.$': '$.manifestText',
        'selector.$': '$.selector',
        'yes.$': '$.yes',
      },
      resultPath: '$.result',
      timeoutSeconds: 915,
      otherwise: 'Refused',
      next: 'AfterRetire',
    }),
    AfterRetire: {
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
      Comment: 'RETIRED: the exact owned stage is gone and proved absent, custody released; the checkpoint did not move.',
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
        flow: 'retire',
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
