import { routeOfEvent, type DeliveryDepsProvider } from '../../delivery/deps-provider.js';
import type { Binding } from '../../domain/delivery/manifest-types.js';
import type { FaultInjector } from '../../ports/faults.js';
import type { Ports } from '../../ports/index.js';
import type { SourcePort } from '../../ports/source.js';
import type { TargetPort } from '../../ports/target.js';
import type { ExchangeTargetPort } from '../../ports/exchange-target.js';
import { probeReader } from '../../adapters/reader-process/probe-reader.js';
import { publicationModeOf } from '../../publication/exchange-mode.js';
import { targetReaderOf, type ObserveReader } from '../../quality/observe-reader.js';
import { openLocalRouteTarget, openLocalSource } from './delivery-bindings.js';
import { lazySource } from '../../delivery/source-guard.js';

/**
 * Step deps for `cutpoint flow run` of a delivery flow (deliver-window and the
 * delivery-reconcile/-resume/-retire recovery flows; publish-clickhouse), as a deployed Lambda builds them
 * (functions/lib/delivery-deps.ts), but from this machine's environment: each Task's
 * input names the route (`manifestText` + `selector`); its target is opened from the
 * target binding's url_env on first use and reused; the run's one fault injector reaches the
 * ports, the target and the bounded reader alike. Only deliver-window and publish-clickhouse get a source,
 * connected on its first call (`openLocalSource`: Begin's read-only check, then extraction);
 * the recovery flows are source-free (a step that would need it fails
 * Delivery.SourceForbidden). `close()` closes whatever was opened.
 */
export interface FlowDeps {
  provider: DeliveryDepsProvider;
  close(): Promise<void>;
}

const key = (b: Binding): string => JSON.stringify(b);

export function localFlowDeps(flow: string, ports: Ports, faults: FaultInjector): FlowDeps {
  const targets = new Map<string, Promise<{ target: TargetPort; exchange?: ExchangeTargetPort }>>();
  const sources = new Map<string, Promise<SourcePort>>();
  const once = <T>(cache: Map<string, Promise<T>>, binding: Binding, open: () => Promise<T>): Promise<T> => {
    let pending = cache.get(key(binding));
    if (!pending) cache.set(key(binding), (pending = open()));
    return pending;
  };
  const provider: DeliveryDepsProvider = async (event) => {
    const route = routeOfEvent(event);
    // A ClickHouse target opens its stage and EXCHANGE sides on one connection.
    const opened = await once(targets, route.targetBinding, () => openLocalRouteTarget(route.targetBinding, faults));
    // An observation's reader: the generic child entry, the binding from this environment.
    const observeReader: ObserveReader = (d) => targetReaderOf(d, probeReader());
    const mode = publicationModeOf(route, { exchange: opened.exchange, observeReader });
    const { target } = opened;
    const source = () => once(sources, route.sourceBinding, () => openLocalSource(route.sourceBinding));
    // delivery-resume reads the source only in its ContinueParts Map (a continuable PARTIAL_PROVED's part Tasks): opened (its binding resolved) on that first read.
    if (flow === 'delivery-resume') return { ports, target, mode, route, faults, source: lazySource(source) };
    if (flow !== 'deliver-window' && flow !== 'publish-clickhouse') return { ports, target, mode, route, faults };
    // openLocalSource connects on the source's first call (Begin's read-only check).
    return {
      ports,
      target,
      mode,
      route,
      faults,
      source: await source(),
    };
  };
  return {
    provider,
    async close() {
      await Promise.allSettled([
        ...[...targets.values()].map(async (p) => (await p).target.close()),
        ...[...sources.values()].map(async (p) => (await p).close()),
      ]);
    },
  };
}
