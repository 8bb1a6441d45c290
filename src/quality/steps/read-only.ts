import type { DeliveryDeps } from '../../delivery/deps.js';
import { validateInvocationId } from '../../domain/delivery/identifiers.js';
import type { SelectedRoute } from '../../domain/delivery/manifest-types.js';
import { CutpointError, ValidationError } from '../../domain/errors.js';
import type { Diagnosis } from '../../domain/quality/diagnosis.js';
import type { ReplayReceipt } from '../../domain/quality/receipt.js';
import type { TargetPort } from '../../ports/target.js';
import { exchangeOf } from '../../publication/exchange-deps.js';
import { diagnoseQuality, type DiagnoseInput } from '../diagnose.js';
import { readOnlyPorts } from '../inspect.js';
import { replayGovernance, type ReplayInput } from '../replay.js';

/**
 * The read-only quality flows' steps (statemachines/quality-replay.asl.json,
 * quality-diagnose.asl.json): `cutpoint quality replay|diagnose <id> --manifest F#R` as a
 * Lambda — the same use cases as the local commands (src/quality/replay.ts, diagnose.ts),
 * over the same read-only views: the stores through readOnlyPorts (every write refused),
 * the target through its identity and its catalogue reads only. Nothing is confirmed
 * because nothing is written; the input is checked before the manifest is parsed or a
 * secret read.
 */

export type ReadOnlyFlow = 'quality-replay' | 'quality-diagnose';

/** Execution input of quality-replay and quality-diagnose: what the operator would type. */
export interface ReadOnlyFlowInput {
  invocationId: string;
  manifestText: string;
  selector: string;
}

/** The id, the manifest text and the selector, or a refusal naming the flow (nothing read yet). */
export function parseReadOnlyInput(flow: ReadOnlyFlow, input: unknown): ReadOnlyFlowInput {
  const v = (input ?? {}) as Partial<Record<keyof ReadOnlyFlowInput, unknown>>;
  const invocationId = validateInvocationId(v.invocationId);
  if (typeof v.manifestText !== 'string' || typeof v.selector !== 'string') {
    throw new ValidationError(
      'quality.step_input_invalid',
      `a ${flow} flow needs invocationId, manifestText and selector in its input`,
    );
  }
  return { invocationId, manifestText: v.manifestText, selector: v.selector };
}

/** A deps provider behind the input check: a malformed input parses no manifest and reads no secret. */
export function readOnlyInputFirst(
  flow: ReadOnlyFlow,
): (provider: (event: unknown) => Promise<DeliveryDeps>) => (event: unknown) => Promise<DeliveryDeps> {
  return (provider) => async (event) => {
    parseReadOnlyInput(flow, event);
    return provider(event);
  };
}

/** A route that is not a ClickHouse exchange publication: nothing is under quality governance there. */
export function notGovernedRoute(route: SelectedRoute): CutpointError {
  return new CutpointError(
    'Quality.NotGoverned',
    'quality.not_governed',
    `route ${route.name} is not a ClickHouse exchange publication (target mode exchange): nothing is under quality governance there`,
  );
}

/** Only a ClickHouse exchange route is under quality governance: any other is refused before a read. */
export function assertGovernedRoute(route: SelectedRoute): void {
  if (route.route.target.mode !== 'exchange') throw notGovernedRoute(route);
}

/** Only the target's identity: the read-only verbs reach nothing else of the target port. */
export function readOnlyTarget(target: TargetPort): Pick<TargetPort, 'identity'> {
  return { identity: () => target.identity() };
}

/** The quality-replay flow's step: the receipt (cutpoint.quality-replay-receipt.v1), as `quality replay` prints it. */
export async function replayStep(input: unknown, deps: DeliveryDeps): Promise<ReplayReceipt> {
  const parsed: ReplayInput = parseReadOnlyInput('quality-replay', input);
  assertGovernedRoute(deps.route);
  const exchange = exchangeOf(deps);
  return replayGovernance(parsed, {
    ports: readOnlyPorts(deps.ports),
    target: readOnlyTarget(deps.target),
    route: deps.route,
    // The evidence reads cross quality.replay.read with the run's injector, as the command's do.
    ...(deps.faults ? { faults: deps.faults } : {}),
    exchange: { observeTables: (names) => exchange.observeTables(names) },
  });
}

/** The quality-diagnose flow's step: the diagnosis (cutpoint.quality-diagnosis.v1), as `quality diagnose` prints it. */
export async function diagnoseStep(input: unknown, deps: DeliveryDeps): Promise<Diagnosis> {
  const parsed: DiagnoseInput = parseReadOnlyInput('quality-diagnose', input);
  assertGovernedRoute(deps.route);
  const exchange = exchangeOf(deps);
  return diagnoseQuality(parsed, {
    ports: readOnlyPorts(deps.ports),
    target: readOnlyTarget(deps.target),
    route: deps.route,
    exchange: { inventory: (db, table) => exchange.inventory(db, table) },
  });
}
