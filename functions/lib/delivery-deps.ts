import { openRouteTargetFor, openSourceFor } from '../../src/adapters/delivery-bindings.js';
import { faultsFromEnv } from '../../src/adapters/fault-injector.js';
import { openSecretsManager } from '../../src/adapters/secrets-manager/secrets.js';
import { resolveBinding } from '../../src/delivery/bindings.js';
import type { DeliveryDeps } from '../../src/delivery/deps.js';
import { parseManifest, parseSelector, selectRoute } from '../../src/domain/delivery/manifest.js';
import type { Binding, SelectedRoute } from '../../src/domain/delivery/manifest-types.js';
import { ValidationError } from '../../src/domain/errors.js';
import type { FaultInjector } from '../../src/ports/faults.js';
import type { SecretsPort } from '../../src/ports/secrets.js';
import type { SourcePort } from '../../src/ports/source.js';
import type { ExchangeTargetPort } from '../../src/ports/exchange-target.js';
import type { TargetPort } from '../../src/ports/target.js';
import { lambdaPorts } from './lambda-ports.js';
import type { StepHandler } from './step.js';
import { lambdaHandler } from './telemetry.js';
import { observedFaults } from './telemetry-invocation.js';

/**
 * Deps for one deliver-window Task, from the Task's input. The manifest travels in the
 * execution input (`manifestText` + `selector`, the exact text begin seals) and the flow
 * hands both to every Task: no S3 round trip, and the sealed manifest digest is checked
 * against the journal by the steps themselves, so a Task cannot be pointed at another
 * route unnoticed (`delivery.route_mismatch`).
 */
export type DeliveryDepsProvider = (event: unknown) => Promise<DeliveryDeps>;

/** A deliver-window use case: `(input, deps) => result`. */
export type DeliveryUseCase<O> = (input: unknown, deps: DeliveryDeps) => Promise<O>;

/**
 * The thin Lambda handler of one deliver-window step: middy around the use case, deps
 * from the provider (per cold start in Lambda; the embedded source/target locally). No
 * try/catch: domain errors leave with their stable `name`.
 */
export function deliveryStep<O>(useCase: DeliveryUseCase<O>) {
  return (deps: DeliveryDepsProvider): StepHandler => {
    return lambdaHandler(async (event: unknown) => useCase(event, await deps(event)));
  };
}

/** The route a Task input names: `{ manifestText, selector }` (`/path/route.yaml#daily`). */
export function routeOfEvent(event: unknown): SelectedRoute {
  const v = event as { manifestText?: unknown; selector?: unknown } | null;
  if (!v || typeof v !== 'object' || typeof v.manifestText !== 'string' || typeof v.selector !== 'string') {
    throw new ValidationError('delivery.step_input_invalid', 'a deliver-window Task needs manifestText and selector in its input');
  }
  const selector = parseSelector(v.selector);
  return selectRoute(parseManifest(v.manifestText, selector.file), selector);
}

/*
 * Deps in a deployed Lambda. The route is resolved from the Task input; its bindings'
 * connection settings come from the Secrets Manager secrets they name (`secret_arn`;
 * src/delivery/bindings.ts documents the accepted JSON keys), never from the Lambda's
 * environment. Everything is built once per cold start and reused by later invocations
 * of the same container (nothing is closed between them): the Secrets Manager port (one
 * GetSecretValue per secret), the fault injector, and each source/target, keyed by the
 * binding's name and where it points (kind, secret_arn), so two manifests that reuse a
 * binding name for different secrets never share a connection. A failed open is
 * evicted, so the next invocation tries again; a resolution failure is a stable
 * Cutpoint.ConfigError (`delivery.binding_*`) naming the binding and the secret's name,
 * never a value.
 */

let secrets: SecretsPort | undefined;
let faults: FaultInjector | undefined;
const sources = new Map<string, Promise<SourcePort>>();
/** A route's target: a SQL target, or a ClickHouse one's stage and EXCHANGE sides on one connection (http(s) only). */
type RouteTarget = { target: TargetPort; exchange?: ExchangeTargetPort };
const targets = new Map<string, Promise<RouteTarget>>();

/** The fault injector for sources and targets: as lambda-ports.ts, armed only with CUTPOINT_FAULTS_IN_LAMBDA=enabled. */
function lambdaFaults(): FaultInjector {
  faults ??= observedFaults(faultsFromEnv(process.env));
  return faults;
}

export function lambdaSecrets(): SecretsPort {
  secrets ??= openSecretsManager();
  return secrets;
}

function once<T>(cache: Map<string, Promise<T>>, binding: Binding, open: () => Promise<T>): Promise<T> {
  const key = JSON.stringify([binding.name, binding.kind, binding.secretArn ?? null]);
  let pending = cache.get(key);
  if (!pending) {
    const opening = Promise.resolve().then(open);
    opening.catch(() => {
      if (cache.get(key) === opening) cache.delete(key);
    });
    cache.set(key, opening);
    pending = opening;
  }
  return pending;
}

function lambdaTarget(binding: Binding): Promise<RouteTarget> {
  return once(targets, binding, async () => {
    const injector = lambdaFaults();
    return openRouteTargetFor(binding, await resolveBinding(binding, { env: process.env, secrets: lambdaSecrets() }), injector);
  });
}

function lambdaSource(binding: Binding): Promise<SourcePort> {
  return once(sources, binding, async () => openSourceFor(binding, await resolveBinding(binding, { env: process.env, secrets: lambdaSecrets() })));
}

/**
 * The extraction step in a deployed Lambda: ports, the route's target and its ClickHouse
 * source. The only provider that reads the source binding's secret.
 */
export const lambdaSourceDeps: DeliveryDepsProvider = (event) =>
  Promise.resolve().then(async () => {
    const route = routeOfEvent(event);
    const [ports, opened, source] = await Promise.all([lambdaPorts(), lambdaTarget(route.targetBinding), lambdaSource(route.sourceBinding)]);
    return { ports, ...opened, source, route };
  });

/**
 * Every other delivery step (deliver-window after extraction reads chunks from S3; the
 * recovery actions are source-free): ports and the target, WITHOUT a source. The
 * ClickHouse binding's secret is never read and ClickHouse is never opened; a step that
 * would need the source fails with Delivery.SourceForbidden.
 */
export const lambdaTargetDeps: DeliveryDepsProvider = (event) =>
  Promise.resolve().then(async () => {
    const route = routeOfEvent(event);
    const [ports, opened] = await Promise.all([lambdaPorts(), lambdaTarget(route.targetBinding)]);
    return { ports, ...opened, route };
  });
