/**
 * The registry (docs/architecture.md 'The layers lint holds'): every Task's step and every flow. Each Task's
 * `Resource` in statemachines/*.asl.json is `${<placeholder>}`, derived from the step's
 * handler path (handlerPlaceholder); CDK turns every step into one Lambda (definitionSubstitutions,
 * least-privilege grants) and the local runner and the cost model build the same handler
 * in-process (handler-contract.ts). Adding a step means adding one `stepEntry({...})` entry to its
 * subsystem's file. The one folder under src/ that refers to functions/ (eslint/folder-layers.js).
 */
import { DELIVERY_ENTRIES } from './delivery-steps.js';
import { ENGINE_ENTRIES } from './engine-steps.js';
import { GENERATION_ENTRIES } from './generation-steps.js';
import { OPERATIONS_ENTRIES } from './operations-steps.js';
import { PUBLICATION_ENTRIES } from './publication-steps.js';
import { RECOVERY_ENTRIES } from './recovery-steps.js';
import type { StepEntry } from './step-entry.js';
import { STREAM_GC_ENTRIES, STREAM_LOG_ENTRIES, STREAM_MAINTENANCE_ENTRIES } from './stream-steps.js';

export type { FlowEntry } from './flow-entry.js';
export { FLOWS } from './flows.js';
export { QUALITY_GATE, QUALITY_STOPS } from './errors.js';
export { OBSERVE_TIMING } from './publication-steps.js';
export { handlerPlaceholder } from '../engine/flow-path.js';
export { type BucketAction, type SecretScope, type StepEntry, type TableAction } from './step-entry.js';

export const STEPS: StepEntry[] = [
  ...GENERATION_ENTRIES,
  ...STREAM_LOG_ENTRIES,
  ...STREAM_GC_ENTRIES,
  ...STREAM_MAINTENANCE_ENTRIES,
  ...ENGINE_ENTRIES,
  // Bounded delivery, one Task per step in DELIVERY_ENTRIES order.
  ...DELIVERY_ENTRIES,
  // ClickHouse publication and quality governance: publish-clickhouse's own steps.
  ...PUBLICATION_ENTRIES,
  // Delivery recovery: inspect, reconcile, resume, retire, incident notice.
  ...RECOVERY_ENTRIES,
  // Operations: the retained-items sweep, on a schedule of its own (no flow).
  ...OPERATIONS_ENTRIES,
];

const twice = STEPS.map((s) => s.placeholder).filter((p, i, all) => all.indexOf(p) !== i);
if (twice.length > 0) throw new Error(`registry: two steps derive the placeholder ${twice.join(', ')}`);

export function stepByPlaceholder(placeholder: string): StepEntry {
  const entry = STEPS.find((s) => s.placeholder === placeholder);
  if (!entry) throw new Error(`no registry entry for placeholder \${${placeholder}} (src/registry/)`);
  return entry;
}

/** The step whose handler is functions/<handler>.ts (`delivery/quality`). */
export function stepByHandler(handler: string): StepEntry {
  const entry = STEPS.find((s) => s.handler === handler);
  if (!entry) throw new Error(`no registry step has the handler '${handler}' (functions/${handler}.ts, src/registry/)`);
  return entry;
}
