import { resolve } from 'node:path';
import { faultsFromEnv } from '../../adapters/fault-injector.js';
import { validateInvocationId } from '../../domain/delivery/identifiers.js';
import { parseManifest, parseSelector, selectRoute, selectorText } from '../../domain/delivery/manifest.js';
import type { Selector, SelectedRoute } from '../../domain/delivery/manifest-types.js';
import { CutpointError } from '../../domain/errors.js';
import type { ExchangeTargetPort } from '../../ports/exchange-target.js';
import type { TargetPort } from '../../ports/target.js';
import { diagnoseQuality } from '../../quality/diagnose.js';
import { readOnlyPorts } from '../../quality/inspect.js';
import { targetReaderOf } from '../../quality/observe-reader.js';
import { assertObservePermitted, operatorObserve } from '../../quality/operator-observe.js';
import { replayGovernance } from '../../quality/replay.js';
import { INPUT_LIMITS, readInputFile } from '../io.js';
import { assertReaderReachable, openLocalRouteTarget } from './delivery-bindings.js';
import { ManifestUnavailableError } from './delivery.js';
import type { Target } from './stream/target.js';

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
  faults: string | undefined;
}

export async function manifestCommand(target: Target, command: ManifestCommand): Promise<unknown> {
  const id = validateInvocationId(command.invocationId);
  const given = parseSelector(command.manifest);
  // The seal digests the selector with the file as the caller resolved it: absolute.
  const selector: Selector = { file: resolve(given.file), route: given.route };
  const ports = await target.ports();
  // observe: the action guide before the manifest (as `delivery reconcile|resume|retire`).
  if (command.verb === 'observe') await assertObservePermitted(ports, id);
  const manifestText = await readManifest(selector.file);
  const route = selectRoute(parseManifest(manifestText, selector.file), selector);
  if (command.verb === 'observe') await assertReaderReachable(route);
  const input = { invocationId: id, manifestText, selector: selectorText(selector) };
  const opened = await openLocalRouteTarget(route.targetBinding, command.faults);
  try {
    const exchange = exchangeSide(opened.exchange, route);
    if (command.verb === 'observe') {
      const reader = await targetReaderOf({ route, ports });
      return await operatorObserve(input, { ports, target: opened.target, exchange, route, reader });
    }
    const reading = { ports: readOnlyPorts(ports), target: readOnlyTarget(opened.target), route };
    if (command.verb === 'diagnose') return await diagnoseQuality(input, { ...reading, exchange: { inventory: (db, t) => exchange.inventory(db, t) } });
    // The replay's reads cross quality.replay.read: CUTPOINT_FAULTS / --faults reach them as they reach the target.
    const faults = faultsFromEnv({ ...process.env, CUTPOINT_FAULTS: command.faults ?? process.env.CUTPOINT_FAULTS });
    return await replayGovernance(input, { ...reading, faults, exchange: { observeTables: (names) => exchange.observeTables(names) } });
  } finally {
    await opened.target.close();
  }
}

function exchangeSide(exchange: ExchangeTargetPort | undefined, route: SelectedRoute): ExchangeTargetPort {
  if (!exchange) {
    throw new CutpointError('Quality.NotGoverned', 'quality.not_governed', `route ${route.name} is not a ClickHouse exchange publication (target mode exchange): nothing is under quality governance there`);
  }
  return exchange;
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
