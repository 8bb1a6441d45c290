import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { validateInvocationId } from '../../domain/delivery/identifiers.js';
import { parseManifest, parseSelector, selectRoute, selectorText } from '../../domain/delivery/manifest.js';
import type { Selector, SelectedRoute } from '../../domain/delivery/manifest-types.js';
import { CutpointError } from '../../domain/errors.js';
import { ownEntry } from '../../domain/own-entry.js';
import type { ExchangeTargetPort } from '../../ports/exchange-target.js';
import { diagnoseQuality } from '../../quality/diagnose.js';
import { readOnlyPorts } from '../../quality/inspect.js';
import { targetReaderOf } from '../../quality/observe-reader.js';
import { probeReader } from '../../adapters/reader-process/probe-reader.js';
import { assertObservePermitted, operatorObserve } from '../../quality/operator-observe.js';
import { replayGovernance } from '../../quality/replay.js';
import { assertGovernedRoute, notGovernedRoute, readOnlyTarget } from '../../quality/steps/read-only.js';
import { assertReaderReachable, openLocalRouteTarget } from './delivery-bindings.js';
import { causeMessage, readManifestFile } from './delivery-failures.js';
import type { Runtime } from './stream/runtime.js';

/**
 * The three `cutpoint quality` verbs that take `--manifest FILE#ROUTE` and reach the
 * route's ClickHouse target: diagnose and replay (read-only: the stores through
 * readOnlyPorts, the target through its identity and catalogue reads only) and observe (a
 * live action) — from this machine, or with --aws through the deployed quality-<verb> flow,
 * whose Lambda runs the same use case. The grammar was checked by quality.ts before any of
 * this runs.
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
  // diagnose and replay --aws touch no store from here: the deployed flow's Lambda reads them.
  const ports = command.verb !== 'observe' && runtime.kind === 'aws' ? undefined : await runtime.ports();
  // observe: the action guide before the manifest (as `delivery reconcile|resume|retire`).
  if (command.verb === 'observe') await assertObservePermitted(ports!, id);
  const manifestText = await readManifestFile(selector.file);
  const route = selectRoute(parseManifest(manifestText, selector.file), selector);
  const input = { invocationId: id, manifestText, selector: selectorText(selector) };
  // On AWS the deployed flow's Lambda resolves the binding from its secret (and, to observe, forks its own reader).
  if (runtime.kind === 'aws') {
    assertGovernedRoute(route);
    return deployedQuality(runtime, command.verb, input);
  }
  if (command.verb === 'observe') await assertReaderReachable(route);
  const opened = await openLocalRouteTarget(route.targetBinding, runtime.faults());
  try {
    const exchange = exchangeSide(opened.exchange, route);
    if (command.verb === 'observe') {
      // The reader crosses the command's injector (quality.worker.reap), as the ports and the target do.
      const reader = await targetReaderOf({ route, ports: ports!, faults: runtime.faults() }, probeReader());
      return await operatorObserve(input, { ports: ports!, target: opened.target, exchange, route, reader });
    }
    const reading = { ports: readOnlyPorts(ports!), target: readOnlyTarget(opened.target), route };
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
  if (!exchange) throw notGovernedRoute(route);
  return exchange;
}

/** The deployed flow of each verb: the same use case in a Lambda, under the same refusals. */
const FLOW_OF: Record<ManifestVerb, string> = {
  observe: 'quality-observe',
  replay: 'quality-replay',
  diagnose: 'quality-diagnose',
};

/**
 * `quality observe|replay|diagnose --aws`: the deployed quality-<verb> flow, waited for, as
 * `delivery reconcile|resume|retire --aws`. A fresh execution name per command unless
 * --name is given (replay and diagnose write nothing; observe is repeat-safe by its
 * custody). Success prints the flow's output — the document the local command prints
 * (observe's projection with the observation, replay's receipt, the diagnosis); any other
 * end exits 1 with the flow's error name and its stable code.
 */
async function deployedQuality(
  runtime: Runtime,
  verb: ManifestVerb,
  input: { invocationId: string; manifestText: string; selector: string },
): Promise<unknown> {
  const executionName = `${verb}-${input.invocationId.slice(4, 20)}-${randomBytes(4).toString('hex')}`;
  const run = await runtime.run(FLOW_OF[verb], executionName, verb === 'observe' ? { ...input, yes: true } : input);
  if (run.status === 'SUCCEEDED') return run.output;
  throw qualityFlowFailure(verb, run.status, run.error, run.cause);
}

/** The stable code of each error name a quality flow can end with, where the name has one code. */
const QUALITY_FLOW_CODES: Record<string, string> = {
  'Quality.TargetPending': 'quality.target_pending',
  'Quality.Failed': 'quality.failed',
  'Quality.Incomplete': 'quality.incomplete',
  'Quality.ActionNotPermitted': 'quality.action_not_permitted',
  'Quality.ConfirmationRequired': 'quality.confirmation_required',
  'Quality.NotGoverned': 'quality.not_governed',
  'Quality.ReaderGuardHeld': 'quality.reader_guard_held',
  'Quality.CompletionEvidencePending': 'quality.completion_evidence_pending',
  'Quality.AuthorityRollback': 'quality.authority_version_rollback',
  'Quality.AuthorityReplaced': 'quality.authority_replaced',
  'Quality.GenerationChanged': 'quality.generation_changed',
  'Quality.CoreDigestMismatch': 'quality.core_digest_mismatch',
  'Delivery.AuthorityMismatch': 'delivery.recovery_authority_mismatch',
};

/**
 * How a deployed quality flow that did not succeed leaves: the flow's error name, its code
 * (`quality.<verb>_flow_failed` for a name with several codes, such as
 * Quality.EvidenceInvalid, or none), the cause's message only.
 */
export function qualityFlowFailure(
  verb: ManifestVerb,
  status: string,
  error: string | undefined,
  cause: string | undefined,
): CutpointError {
  const name = error ?? `Quality.${verb[0]!.toUpperCase()}${verb.slice(1)}FlowFailed`;
  return new CutpointError(
    name,
    ownEntry(QUALITY_FLOW_CODES, name) ?? `quality.${verb}_flow_failed`,
    `${verb} ended ${status} with ${name}${cause ? `: ${causeMessage(cause)}` : ''}`,
  );
}

/** How a deployed observation that did not end COMPLETE leaves (qualityFlowFailure of observe). */
export function observeFlowFailure(
  status: string,
  error: string | undefined,
  cause: string | undefined,
): CutpointError {
  return qualityFlowFailure('observe', status, error, cause);
}
