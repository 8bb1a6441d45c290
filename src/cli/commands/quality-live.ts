import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { validateInvocationId } from '../../domain/delivery/identifiers.js';
import { parseManifest, parseSelector, selectRoute, selectorText } from '../../domain/delivery/manifest.js';
import type { Selector, SelectedRoute } from '../../domain/delivery/manifest-types.js';
import { CutpointError } from '../../domain/errors.js';
import { ownEntry } from '../../domain/own-entry.js';
import type { ExchangeTargetPort } from '../../ports/exchange-target.js';
import type { TargetPort } from '../../ports/target.js';
import { diagnoseQuality } from '../../quality/diagnose.js';
import { readOnlyPorts } from '../../quality/inspect.js';
import { targetReaderOf } from '../../quality/observe-reader.js';
import { probeReader } from '../../adapters/reader-process/probe-reader.js';
import { assertObservePermitted, operatorObserve } from '../../quality/operator-observe.js';
import { replayGovernance } from '../../quality/replay.js';
import { INPUT_LIMITS, readInputFile } from '../io.js';
import { assertReaderReachable, openLocalRouteTarget } from './delivery-bindings.js';
import { causeMessage, ManifestUnavailableError } from './delivery-failures.js';
import type { Runtime } from './stream/runtime.js';

/**
 * The three `cutpoint quality` verbs that take `--manifest FILE#ROUTE` and reach the
 * route's ClickHouse target from this machine: diagnose and replay (read-only: the stores
 * through readOnlyPorts, the target through its identity and catalogue reads only) and
 * observe (a live action). The grammar was checked by quality.ts before any of this runs.
 */

export type ManifestVerb = 'diagnose' | 'observe' | 'replay';

export interface ManifestCommand {
  verb: ManifestVerb;
  invocationId: string;
  manifest: string;
}

export async function manifestCommand(runtime: Runtime, command: ManifestCommand): Promise<unknown> {
  const id = validateInvocationId(command.invocationId);
  const given = parseSelector(command.manifest);
  // The seal digests the selector with the file as the caller resolved it: absolute.
  const selector: Selector = { file: resolve(given.file), route: given.route };
  const ports = await runtime.ports();
  // observe: the action guide before the manifest (as `delivery reconcile|resume|retire`).
  if (command.verb === 'observe') await assertObservePermitted(ports, id);
  const manifestText = await readManifest(selector.file);
  const route = selectRoute(parseManifest(manifestText, selector.file), selector);
  const input = { invocationId: id, manifestText, selector: selectorText(selector) };
  // On AWS the deployed flow's Lambda resolves the binding from its secret and forks its own reader.
  if (command.verb === 'observe' && runtime.kind === 'aws') {
    assertExchangeRoute(route);
    return deployedObserve(runtime, input);
  }
  if (command.verb === 'observe') await assertReaderReachable(route);
  const opened = await openLocalRouteTarget(route.targetBinding, runtime.faults());
  try {
    const exchange = exchangeSide(opened.exchange, route);
    if (command.verb === 'observe') {
      // The reader crosses the command's injector (quality.worker.reap), as the ports and the target do.
      const reader = await targetReaderOf({ route, ports, faults: runtime.faults() }, probeReader());
      return await operatorObserve(input, { ports, target: opened.target, exchange, route, reader });
    }
    const reading = { ports: readOnlyPorts(ports), target: readOnlyTarget(opened.target), route };
    if (command.verb === 'diagnose')
      return await diagnoseQuality(input, {
        ...reading,
        exchange: { inventory: (db, t) => exchange.inventory(db, t) },
      });
    // The replay's reads cross quality.replay.read: CUTPOINT_FAULTS / --faults reach them as they reach the target.
    return await replayGovernance(input, {
      ...reading,
      faults: runtime.faults(),
      exchange: { observeTables: (names) => exchange.observeTables(names) },
    });
  } finally {
    await opened.target.close();
  }
}

function exchangeSide(exchange: ExchangeTargetPort | undefined, route: SelectedRoute): ExchangeTargetPort {
  if (!exchange) throw notGoverned(route);
  return exchange;
}

function assertExchangeRoute(route: SelectedRoute): void {
  if (route.route.target.mode !== 'exchange') throw notGoverned(route);
}

const notGoverned = (route: SelectedRoute) =>
  new CutpointError(
    'Quality.NotGoverned',
    'quality.not_governed',
    `route ${route.name} is not a ClickHouse exchange publication (target mode exchange): nothing is under quality governance there`,
  );

/**
 * `quality observe --aws`: the deployed quality-observe flow (the same use case in a Lambda,
 * under the same refusals), waited for, as `delivery reconcile|resume|retire --aws`. COMPLETE
 * prints the flow's output (the projection with the observation); any other end exits 1
 * with the flow's error name and its stable code.
 */
async function deployedObserve(
  runtime: Runtime,
  input: { invocationId: string; manifestText: string; selector: string },
): Promise<unknown> {
  const executionName = `observe-${input.invocationId.slice(4, 20)}-${randomBytes(4).toString('hex')}`;
  const run = await runtime.run('quality-observe', executionName, { ...input, yes: true });
  if (run.status === 'SUCCEEDED') return run.output;
  throw observeFlowFailure(run.status, run.error, run.cause);
}

const OBSERVE_FLOW_CODES: Record<string, string> = {
  'Quality.TargetPending': 'quality.target_pending',
  'Quality.Failed': 'quality.failed',
  'Quality.Incomplete': 'quality.incomplete',
  'Quality.ActionNotPermitted': 'quality.action_not_permitted',
  'Quality.ConfirmationRequired': 'quality.confirmation_required',
  'Quality.NotGoverned': 'quality.not_governed',
  'Delivery.AuthorityMismatch': 'delivery.recovery_authority_mismatch',
};

/** How a deployed observation that did not end COMPLETE leaves: the flow's error name, its code, the cause's message only. */
export function observeFlowFailure(
  status: string,
  error: string | undefined,
  cause: string | undefined,
): CutpointError {
  const name = error ?? 'Quality.ObserveFlowFailed';
  return new CutpointError(
    name,
    ownEntry(OBSERVE_FLOW_CODES, name) ?? 'quality.observe_flow_failed',
    `observe ended ${status} with ${name}${cause ? `: ${causeMessage(cause)}` : ''}`,
  );
}

/** Only the target's identity: the read-only verbs reach nothing else of the target port. */
function readOnlyTarget(target: TargetPort): Pick<TargetPort, 'identity'> {
  return { identity: () => target.identity() };
}

async function readManifest(file: string): Promise<string> {
  try {
    return new TextDecoder().decode(await readInputFile(file, INPUT_LIMITS.manifest, 'manifest'));
  } catch (error) {
    throw new ManifestUnavailableError(file, (error as NodeJS.ErrnoException).code ?? 'unreadable');
  }
}
