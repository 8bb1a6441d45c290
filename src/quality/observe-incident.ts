import { executionOf, notifyIncident, type IncidentNoticeOutput } from '../delivery/recovery/incident-notice.js';
import { loadInvocation, type InvocationRecord } from '../delivery/journal/records.js';
import { validateInvocationId } from '../domain/delivery/identifiers.js';
import type { Ports } from '../ports/index.js';
import type { Notifier } from '../ports/notifier.js';
import { readCapsule } from './capsule-store.js';
import type { StoredCapsule } from '../domain/quality/capsule.js';
import { runbookLinkOf } from '../docs/runbook/ref.js';

export const QUALITY_INCIDENT_KIND = 'cutpoint.quality-incident.v1';

/**
 * The incident step of publish-clickhouse (the same NotifyIncident Task the recovery flows
 * use; docs/rules.md#quality-commands: a FAILED capsule notifies the incident topic). A journal
 * in INCIDENT_RETAINED notifies as every delivery incident does (notifyIncident). Otherwise the
 * operation's governance is the incident when the authority says so, read from the capsule,
 * never from the flow's payload: a capsule FAILED (a required probe failed on the published
 * generation: terminal, escalate), or a reader guard still held after the flow gave up (an
 * INCOMPLETE observation: the quiescence procedure). The notice names the operation, its
 * states, the failed probes' NAMES and the holder's run id — never a value, a UUID, the token
 * or a target name. `notice_id` is stable per capsule version, so a retried step's second
 * publish folds into the first (SNS is at least once).
 */
export async function notifyGovernanceIncident(
  input: unknown,
  ports: Ports,
  notifier: Notifier,
): Promise<IncidentNoticeOutput> {
  const delivery = await notifyIncident(input, ports, notifier);
  if (delivery.published) return delivery;
  const v = (input ?? {}) as { invocationId?: unknown; flow?: unknown; execution?: unknown };
  const invocationId = validateInvocationId(v.invocationId);
  const record = await loadInvocation(ports, invocationId);
  const capsule = await readCapsule(ports, { targetId: record.targetId, invocationId });
  if (!capsule) return delivery;
  const notice = governanceIncidentNotice(record, capsule, executionOf(v));
  if (!notice) return delivery;
  await notifier.publish(notice.subject, notice.message);
  return { published: true, invocation_id: invocationId, state: record.state };
}

/**
 * The governance incident of one operation, if its capsule holds one (pure): a FAILED
 * capsule, or a reader guard still held. Names the runbook page of that state and its
 * one command, as the state's alarm and `quality inspect` do.
 */
export function governanceIncidentNotice(
  record: Pick<InvocationRecord, 'invocationId' | 'route' | 'state'>,
  capsule: StoredCapsule,
  execution: ReturnType<typeof executionOf>,
): { subject: string; message: Record<string, unknown> } | undefined {
  if (capsule.schema !== 2) return undefined;
  const failed = capsule.state === 'FAILED';
  if (!failed && !capsule.reader) return undefined;
  const { invocationId } = record;
  const code = failed ? 'quality.failed' : 'quality.incomplete';
  const state = failed ? 'FAILED' : 'READER_GUARD_HELD';
  return {
    subject: `cutpoint: quality governance ${failed ? 'FAILED' : 'incomplete'} (${record.route})`,
    message: {
      kind: QUALITY_INCIDENT_KIND,
      notice_id: `quality-incident.${invocationId}.${capsule.version}`,
      ...execution,
      invocation_id: invocationId,
      state,
      runbook: runbookLinkOf('quality', state),
      governance: {
        invocation_id: invocationId,
        route: record.route,
        journal_state: record.state,
        capsule_state: capsule.state,
        diagnostic_code: code,
        ...(failed ? { failed_probes: capsule.failure?.probes ?? [] } : {}),
        reader_guard: capsule.reader
          ? { held: true, since: capsule.reader.acquiredAt, holder_run_id: capsule.reader.runId }
          : { held: false },
      },
      next: `cutpoint quality inspect ${invocationId} --format json`,
    },
  };
}
