import { onError, task, type AslState } from './task.js';

/** The notice's own refusals: the stop still ends in its named Fail state (a failure to notify never hides it). */
const NOTICE_FAILURES = [
  'Cutpoint.ValidationError',
  'Cutpoint.ConfigError',
  'Delivery.JournalUnavailable',
  'Quality.EvidenceInvalid',
  'Quality.CapsuleVersionUnsupported',
];

/**
 * The NotifyIncident Task of a governed flow (publish-clickhouse, quality-observe): the stop
 * that may be an incident passes here and goes on to AfterIncident, the Choice that picks
 * its Fail state. What it publishes is read from the authority, never from this payload.
 */
export function notifyIncidentTask(spec: { flow: string; comment: string; invocationId: string }): AslState {
  return task({
    comment: spec.comment,
    lambda: 'delivery/notify-incident',
    parameters: { 'invocationId.$': spec.invocationId, flow: spec.flow, 'execution.$': '$$.Execution.Id' },
    resultPath: '$.notice',
    timeoutSeconds: 45,
    catch: [onError('AfterIncident', NOTICE_FAILURES, '$.noticeFailure')],
    next: 'AfterIncident',
  });
}
