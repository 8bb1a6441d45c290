import { confirmed, OPERATOR_ACTION } from '../spec/confirmed.js';
import type { AslState } from '../spec/task.js';
import { task } from '../spec/task.js';

/*
 * The three delivery recovery flows (delivery-reconcile, -resume, -retire) are one template:
 * the confirmation (`yes: true`), the action's Task under a new recovery session, the route
 * on the journal state it reached (done, retained, or an incident notified), and the
 * refusal carrying the step's own error. Reconcile adds its automatic start in front.
 */
export interface RecoveryActionSpec {
  action: 'reconcile' | 'resume' | 'retire';
  /** What the action does beyond the shared contract, appended to its Task's comment. */
  actionNote?: string;
  doneComment: string;
  /**
   * Resume's continue on the flow (src/delivery/recovery/continue.ts `handPartsToMap`):
   * where the action's result carrying `delivery` goes, and the states from there.
   */
  continueOnMap?: { next: string; states: Record<string, AslState> };
}

export function recoveryStates(o: RecoveryActionSpec): Record<string, AslState> {
  const Action = o.action[0]!.toUpperCase() + o.action.slice(1);
  return {
    Confirmed: confirmed({
      next: Action,
      comment:
        "A live action needs explicit confirmation (`yes: true`, the CLI's --yes). Without it the flow fails here with Delivery.ConfirmationRequired (delivery.recovery_confirmation_required) before any Task runs: the manifest is not parsed, no secret is read, nothing is touched.",
    }),
    ConfirmationRequired: {
      Type: 'Fail',
      Error: 'Delivery.ConfirmationRequired',
      Cause: `delivery.recovery_confirmation_required: ${o.action} changes target custody; start it again with "yes": true to confirm`,
      Comment: 'Refused before any Task: nothing was read or mutated.',
    },
    [Action]: task({
      comment: `\`${o.action}\` (docs/delivery.md: recovery): a new recovery session takes custody (epoch + 1, so any zombie of an older epoch is fenced out), after the state-to-action guide, the confirmation (\`yes\`) and the sealed authority (manifest, selector, bindings, the target's observed identity, the work root) are rechecked; any refusal mutates nothing. A retained outcome is returned, not thrown.${o.actionNote ? ` ${o.actionNote}` : ''}`,
      lambda: `delivery/recover-${o.action}`,
      checksInput: `delivery-${o.action}`,
      parameters: OPERATOR_ACTION,
      resultPath: '$.result',
      timeoutSeconds: 915,
      otherwise: 'Refused',
      next: `After${Action}`,
    }),
    [`After${Action}`]: {
      Type: 'Choice',
      Comment: 'Route on the journal state the action reached.',
      Choices: [
        {
          Variable: '$.result.state',
          StringEquals: 'INCIDENT_RETAINED',
          Next: 'NotifyIncident',
        },
        ...(o.continueOnMap ? [{ Variable: '$.result.delivery', IsPresent: true, Next: o.continueOnMap.next }] : []),
        {
          Variable: '$.result.retained',
          BooleanEquals: true,
          Next: 'Retained',
        },
      ],
      Default: 'Done',
    },
    ...o.continueOnMap?.states,
    Done: {
      Type: 'Succeed',
      Comment: o.doneComment,
      OutputPath: '$.result',
    },
    Retained: {
      Type: 'Fail',
      Error: 'Delivery.RecoveryRetained',
      CausePath: '$.result.reason',
      Comment:
        'The action ended short of its goal; the state is journaled and custody is retained. `cutpoint delivery inspect` names the next permitted action.',
    },
    NotifyIncident: task({
      comment:
        "A retained incident: publish the invocation's recovery projection (state, diagnostic code, permitted actions; never journal content or credentials) to the incident SNS topic, then fail.",
      lambda: 'delivery/notify-incident',
      parameters: {
        'invocationId.$': '$.invocationId',
        flow: o.action,
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
      Cause:
        'the journal holds INCIDENT_RETAINED: custody is retained until an operator resolves the contradicting evidence; the incident topic was notified',
      Comment: 'Terminal for automation: nothing retries or resumes an incident.',
    },
    Refused: {
      Type: 'Fail',
      ErrorPath: '$.failure.Error',
      CausePath: '$.failure.Cause',
      Comment:
        "A refusal before or during the action (confirmation, id, journal, permitted action, sealed authority, fence, target): the step's own stable error name and message; nothing was mutated by the refused part.",
    },
  };
}
