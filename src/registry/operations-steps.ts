/**
 * Operations across subsystems: the retained-items sweep (src/operations/retained.ts),
 * invoked by an EventBridge schedule (infra/retained-sweep.ts), not by a flow. Read-only:
 * the held index (Query) and each held invocation's record and capsule (GetItem); its metric leaves through the telemetry's EMF logs, so it needs no
 * cloudwatch:PutMetricData.
 */
import { stepEntry, type StepEntry } from './step-entry.js';

export const OPERATIONS_ENTRIES: StepEntry[] = [
  stepEntry({
    handler: 'operations/sweep-retained',
    needs: 'ports',
    load: () => import('../../functions/operations/sweep-retained.js'),
    cutPoints: [],
    table: ['dynamodb:GetItem', 'dynamodb:Query'],
    bucket: [],
    errors: [
      'Cutpoint.ValidationError',
      'Delivery.JournalUnavailable',
      'Quality.EvidenceInvalid',
      'Quality.CapsuleVersionUnsupported',
    ],
    timeoutSeconds: 120,
    memoryMB: 256,
    invokedBy: 'schedule',
  }),
];
