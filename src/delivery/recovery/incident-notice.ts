import { validateInvocationId } from '../../domain/delivery/identifiers.js';
import { executionConsoleLink } from '../../domain/execution-link.js';
import type { Ports } from '../../ports/index.js';
import type { Notifier } from '../../ports/notifier.js';
import { inspectInvocation } from '../journal/listing.js';
import { inspectCommand } from './inspect-command.js';

export const INCIDENT_NOTICE_KIND = 'cutpoint.delivery-incident.v1';

export interface IncidentNoticeOutput {
  published: boolean;
  invocation_id: string;
  state: string;
}

/**
 * "A retained incident notifies an SNS topic" (issue 4). The notice is built from the
 * journal, not from the flow's payload: the invocation's recovery projection (state,
 * diagnostic code, permitted actions, route, window) and the execution that saw it —
 * never journal facts, target names or credentials. Published only while the journal
 * really holds INCIDENT_RETAINED. SNS delivery is at least once: a retried step may
 * publish twice, and `notice_id` is the same both times so a subscriber can fold them.
 */
/** The flow and execution that saw it, as the step was given them, with the execution's console page. */
export function executionOf(v: { flow?: unknown; execution?: unknown }): {
  flow?: string;
  execution?: string;
  execution_console?: string;
} {
  const console = typeof v.execution === 'string' ? executionConsoleLink(v.execution) : undefined;
  return {
    ...(typeof v.flow === 'string' ? { flow: v.flow } : {}),
    ...(typeof v.execution === 'string' ? { execution: v.execution } : {}),
    ...(console ? { execution_console: console } : {}),
  };
}

export async function notifyIncident(input: unknown, ports: Ports, notifier: Notifier): Promise<IncidentNoticeOutput> {
  const v = (input ?? {}) as { invocationId?: unknown; flow?: unknown; execution?: unknown };
  const invocationId = validateInvocationId(v.invocationId);
  const projection = await inspectInvocation(ports, invocationId);
  if (projection.state !== 'INCIDENT_RETAINED')
    return { published: false, invocation_id: invocationId, state: projection.state };
  await notifier.publish(`cutpoint: delivery incident retained (${projection.route})`, {
    kind: INCIDENT_NOTICE_KIND,
    notice_id: `incident.${invocationId}`,
    ...executionOf(v),
    invocation_id: invocationId,
    state: projection.state,
    projection,
    runbook: projection.runbook,
    next: inspectCommand(invocationId),
  });
  return { published: true, invocation_id: invocationId, state: projection.state };
}
