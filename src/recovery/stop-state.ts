import { escalationPageOf, runbookLinkOf, runbookPage } from '../docs/runbook/ref.js';
import type { RunbookLink } from '../domain/runbook-link.js';
import type { RecoverySubject } from './recovery-stops.js';

/** A durable state a recovery's end leaves, with its runbook; `state: null` when the end alone does not say. */
export interface StopState {
  state: string | null;
  runbook: RunbookLink;
}

/**
 * What a recovery execution's end leaves, read from its subject and error alone (a notice
 * is built from the status-change event, without reading the table): a stream lane's
 * paging stops leave the attempt MAY_HAVE_COMMITTED (the lane may stay suspended); a
 * generation task's leave it PREPARED (undecided, holding its slot); a delivery recovery
 * that retained an incident leaves INCIDENT_RETAINED. Any other delivery end leaves a
 * journal state only `delivery inspect` can tell: state null, the runbook's escalation and
 * that inspect command (src/docs/runbook/render.ts ESCALATION).
 */
export function stopStateOf(subject: RecoverySubject, error: string | null | undefined, base?: string): StopState {
  const at = base === undefined ? {} : { base };
  switch (subject) {
    case 'lane':
      return { state: 'MAY_HAVE_COMMITTED', runbook: runbookLinkOf('stream', 'MAY_HAVE_COMMITTED', at) };
    case 'task':
      return { state: 'PREPARED', runbook: runbookLinkOf('generation', 'PREPARED', at) };
    case 'invocation':
      return error === 'Delivery.IncidentRetained'
        ? { state: 'INCIDENT_RETAINED', runbook: runbookLinkOf('delivery', 'INCIDENT_RETAINED', at) }
        : {
            state: null,
            runbook: { command: runbookPage('delivery', 'INCIDENT_RETAINED').inspect, page: escalationPageOf(base) },
          };
  }
}
