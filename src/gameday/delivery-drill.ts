import { randomBytes } from 'node:crypto';
import { loadCheckpoint } from '../delivery/checkpoint.js';
import { inspectInvocation } from '../delivery/journal/listing.js';
import { loadInvocation, type InvocationRecord } from '../delivery/journal/records.js';
import { invocationIdFrom, targetIdOf } from '../domain/delivery/identifiers.js';
import { isTerminal, JournalUnavailableError } from '../domain/delivery/journal-states.js';
import type { SelectedRoute } from '../domain/delivery/manifest-types.js';
import { resolveWindow } from '../domain/delivery/window.js';
import type { Drill } from '../domain/gameday/drill-plan.js';
import type { TargetObservers } from '../ports/gameday-driver.js';
import type { Ports } from '../ports/index.js';
import { FLOWS } from '../registry/index.js';
import { checkDeliveryDrill } from './delivery-invariants.js';
import type { DrillWorld } from './drill-world.js';
import type { DrillReport } from './report.js';

/**
 * One delivery drill: a new invocation of the route through deliver-window with the drill's
 * fault armed for the whole run; then, faults off, the recovery an operator gets — the
 * flow's automatic recovery (the flow EventBridge starts when it fails: delivery-reconcile),
 * then the one command inspect prints, as its delivery-<action> flow, until the journal is
 * final — and the invariants (delivery-invariants.ts).
 */

export interface DeliveryDrillContext extends DrillWorld {
  route: SelectedRoute;
  manifestText: string;
  selector: string;
  observers: TargetObservers;
}

/** Recovery steps before a drill gives up on converging (each is a flow run). */
const MAX_RECOVERY_STEPS = 8;

export async function runDeliveryDrill(c: DeliveryDrillContext, drill: Drill): Promise<DrillReport> {
  const { driver, route, ports } = c;
  const invocationId = invocationIdFrom(new Uint8Array(randomBytes(16)));
  const short = invocationId.slice(4, 20);
  const table = { schema: route.route.target.table.schema, table: route.route.target.table.name };
  const census = (window: { start: Date; end: Date }) =>
    c.observers.census.census({
      table,
      timeColumn: route.route.target.timeColumn,
      keyColumns: route.route.target.keyColumns,
      window,
    });
  const planned = resolveWindow(route.route.window, ports.clock.now());
  const before = {
    census: await census({ start: new Date(planned.start), end: new Date(planned.end) }),
    checkpoint: await loadCheckpoint(
      ports,
      targetIdOf(route.route.target.binding, route.route.target.table),
      route.name,
    ),
  };
  const input = { invocationId, session: `gameday-${short}`, manifestText: c.manifestText, selector: c.selector };
  const recoveryInput = { invocationId, manifestText: c.manifestText, selector: c.selector, yes: true };
  const trail: string[] = [];
  const states: string[] = [];
  const step = async (what: string, flow: string, name: string, flowInput: unknown): Promise<void> => {
    const run = await driver.runFlow(flow, name, flowInput);
    const record = await tryLoad(ports, invocationId);
    if (record) states.push(record.state);
    trail.push(`${what} ${run.status}${run.error ? ` ${run.error}` : ''} → ${record?.state ?? 'no journal'}`);
    c.progress(`  ${trail.at(-1)}`);
  };

  c.progress(`drill ${drill.spec} (invocation ${invocationId})`);
  const armed = await driver.arm(drill.spec);
  let fired: number | undefined;
  try {
    await step('deliver-window', drill.flow, `gameday-${short}`, input);
  } finally {
    fired = await armed.disarm();
  }
  const automatic = FLOWS.find((f) => f.name === drill.flow)?.recovery?.by;
  let record = await tryLoad(ports, invocationId);
  if (automatic && record && !isTerminal(record.state))
    await step(`automatic ${automatic}`, automatic, `auto-${short}`, recoveryInput);
  for (let i = 0; i < MAX_RECOVERY_STEPS; i++) {
    record = await tryLoad(ports, invocationId);
    if (record && isTerminal(record.state)) break;
    const action = record ? (await inspectInvocation(ports, invocationId)).permitted_actions[0] : undefined;
    const suffix = `${short}-${i}`;
    if (action) await step(`delivery ${action}`, `delivery-${action}`, `${action}-${suffix}`, recoveryInput);
    // No journal (Begin never ran) or no action (a stage not yet recorded): only the same invocation finishing.
    else await step('deliver-window again', drill.flow, `again-${suffix}`, input);
  }
  record = await tryLoad(ports, invocationId);
  const invariants = await checkDeliveryDrill(before, {
    ports,
    route,
    observers: c.observers,
    record,
    states,
    fired: fired ?? null,
    census,
  });
  return {
    ...drill,
    fired: fired ?? null,
    trail,
    finalState: record?.state ?? 'no journal',
    invariants,
    held: invariants.every((i) => i.held),
  };
}

async function tryLoad(ports: Ports, invocationId: string): Promise<InvocationRecord | undefined> {
  try {
    return await loadInvocation(ports, invocationId);
  } catch (error) {
    if (error instanceof JournalUnavailableError && error.missing) return undefined;
    throw error;
  }
}
