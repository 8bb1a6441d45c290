import { openRouteTargetFor, openSourceFor } from '../../src/adapters/delivery-bindings.js';
import { faultsFromEnv } from '../../src/adapters/fault-injector.js';
import { probeReader } from '../../src/adapters/reader-process/probe-reader.js';
import type { SecretCache } from '../../src/adapters/secrets-manager/secret-cache.js';
import { openSecretsManager } from '../../src/adapters/secrets-manager/secrets.js';
import type { DeliveryDeps } from '../../src/delivery/deps.js';
import { routeOfEvent, type DeliveryDepsProvider } from '../../src/delivery/deps-provider.js';
import type { Binding } from '../../src/domain/delivery/manifest-types.js';
import type { FaultInjector } from '../../src/ports/faults.js';
import type { SourcePort } from '../../src/ports/source.js';
import type { ExchangeTargetPort } from '../../src/ports/exchange-target.js';
import type { TargetPort } from '../../src/ports/target.js';
import { needOf, type HandlerNeeds, type StepHandler } from '../../src/registry/handler-contract.js';
import { publicationModeOf } from '../../src/publication/exchange-mode.js';
import { targetReaderOf, type ObserveReader } from '../../src/quality/observe-reader.js';
import { ConnectionCache } from './connection-cache.js';
import { lambdaPorts } from './lambda-ports.js';
import { instrumentClient, lambdaHandler } from './telemetry.js';
import { observedFaults } from './telemetry-invocation.js';

/** A deliver-window use case: `(input, deps) => result`. */
export type DeliveryUseCase<O> = (input: unknown, deps: DeliveryDeps) => Promise<O>;

/**
 * The thin Lambda handler of one deliver-window step: middy around the use case, deps
 * from the provider its needs carry (per cold start in Lambda; the embedded source/target
 * locally), first wrapped by `checked` when the step checks its input before the provider
 * runs. No try/catch: domain errors leave with their stable `name`.
 */
export function deliveryStep<O>(
  useCase: DeliveryUseCase<O>,
  checked: (deps: DeliveryDepsProvider) => DeliveryDepsProvider = (deps) => deps,
) {
  return (needs: HandlerNeeds): StepHandler => {
    const deps = checked(needOf(needs, 'delivery'));
    return lambdaHandler(async (event: unknown) => useCase(event, await deps(event)));
  };
}

/*
 * Deps in a deployed Lambda. The route is resolved from the Task input; its bindings'
 * connection settings come from the Secrets Manager secrets they name (`secret_arn`;
 * src/delivery/bindings.ts documents the accepted JSON keys), never from the Lambda's
 * environment. Built once per cold start and reused by later invocations of the same
 * container: the Secrets Manager port with its secret cache (Powertools' SecretsProvider;
 * CUTPOINT_SECRET_TTL_SECONDS, default 5 minutes), the fault injector, and the open sources and targets
 * (connection-cache.ts: re-opened when their secret changed, dropped with their secret
 * when the database refuses the credentials). A resolution failure is a stable
 * Cutpoint.ConfigError (`delivery.binding_*`) naming the binding and the secret's name,
 * never a value.
 */

let secrets: SecretCache | undefined;
let faults: FaultInjector | undefined;
/** A route's target: a SQL target, or a ClickHouse one's stage and EXCHANGE sides on one connection (http(s) only). */
type RouteTarget = { target: TargetPort; exchange?: ExchangeTargetPort };
let sources: ConnectionCache<SourcePort> | undefined;
let targets: ConnectionCache<RouteTarget> | undefined;

/** The fault injector for sources and targets: as lambda-ports.ts, armed only with CUTPOINT_FAULTS_IN_LAMBDA=enabled. */
function lambdaFaults(): FaultInjector {
  faults ??= observedFaults(faultsFromEnv(process.env));
  return faults;
}

export function lambdaSecrets(): SecretCache {
  secrets ??= openSecretsManager({ instrument: instrumentClient });
  return secrets;
}

function lambdaTarget(binding: Binding): Promise<RouteTarget> {
  targets ??= new ConnectionCache<RouteTarget>({ secrets: lambdaSecrets() }, (opened) => opened.target);
  return targets.get(binding, (settings) => openRouteTargetFor(binding, settings, lambdaFaults()));
}

/**
 * The route's publication mode (src/publication/exchange-mode.ts `publicationModeOf`). Its
 * observation reader here is the generic one; the observing handlers replace it with the
 * bundle's own (functions/quality/observe-step.ts `readerStep`).
 */
const genericReader: ObserveReader = (d) => targetReaderOf(d, probeReader());

function lambdaSource(binding: Binding): Promise<SourcePort> {
  sources ??= new ConnectionCache<SourcePort>({ secrets: lambdaSecrets() }, (source) => source);
  return sources.get(binding, (settings) => openSourceFor(binding, settings));
}

/**
 * The extraction step in a deployed Lambda: ports, the route's target and its ClickHouse
 * source. The only provider that reads the source binding's secret.
 */
export const lambdaSourceDeps: DeliveryDepsProvider = (event) =>
  Promise.resolve().then(async () => {
    const route = routeOfEvent(event);
    const [ports, opened, source] = await Promise.all([
      lambdaPorts(),
      lambdaTarget(route.targetBinding),
      lambdaSource(route.sourceBinding),
    ]);
    const mode = publicationModeOf(route, { exchange: opened.exchange, observeReader: genericReader });
    return { ports, target: opened.target, mode, source, route, faults: lambdaFaults() };
  });

/**
 * Every other delivery step (deliver-window after extraction reads chunks from S3; the
 * recovery actions are source-free): ports and the target, WITHOUT a source. The
 * ClickHouse binding's secret is never read and ClickHouse is never opened (resume's
 * continue of a PARTIAL_PROVED hands its parts to the flow's Map, whose part Task reads the
 * source); a step that
 * would need the source fails with Delivery.SourceForbidden.
 */
export const lambdaTargetDeps: DeliveryDepsProvider = (event) =>
  Promise.resolve().then(async () => {
    const route = routeOfEvent(event);
    const [ports, opened] = await Promise.all([lambdaPorts(), lambdaTarget(route.targetBinding)]);
    const mode = publicationModeOf(route, { exchange: opened.exchange, observeReader: genericReader });
    return { ports, target: opened.target, mode, route, faults: lambdaFaults() };
  });
