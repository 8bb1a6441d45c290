import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import { routeOfEvent } from '../../delivery/deps-provider.js';
import { inspectInvocation } from '../../delivery/journal/listing.js';
import { loadInvocation } from '../../delivery/journal/records.js';
import type { BeginInput } from '../../delivery/steps/begin.js';
import { TRANSACTION_MODE } from '../../delivery/transaction-mode.js';
import {
  invocationIdFrom,
  targetIdOf,
  validateInvocationId,
  type RecoveryProjection,
} from '../../domain/delivery/identifiers.js';
import { JournalUnavailableError } from '../../domain/delivery/journal-states.js';
import { assertSealedForRun } from '../../domain/delivery/seal-for-run.js';
import { parseManifest, parseSelector, selectRoute, selectorText } from '../../domain/delivery/manifest.js';
import type { SelectedRoute } from '../../domain/delivery/manifest-types.js';
import { CutpointError } from '../../domain/errors.js';
import { tryLock } from '../../local/exclusive-lock.js';
import { runFlow, type FlowEvent, type FlowResult } from '../../local/flow-runner.js';
import { defaultStateDir } from '../../local/state-dir.js';
import type { Ports } from '../../ports/index.js';
import type { SourcePort } from '../../ports/source.js';
import type { TargetPort } from '../../ports/target.js';
import { flowProgress } from '../flow-progress.js';
import { NeedsRecoveryError } from '../../delivery/steps/flow-stop.js';
import { printResult, progress, UsageError } from '../io.js';
import { parseOptions, unexpectedArgument } from '../grammar.js';
import { AWS_OPTIONS } from '../aws-runtime.js';
import { failureNote, notingTargetCheck, openLocalSource, openLocalTarget } from './delivery-bindings.js';
import { causeMessage, readManifestFile } from './delivery-failures.js';
import { runtimeOf, type Runtime } from './stream/runtime.js';

/**
 * `cutpoint delivery run --manifest FILE#ROUTE [--invocation-id ID] [--aws]`:
 * one run of a route through the deliver-window state machine.
 *
 * Locally: the local runner over the same handlers Lambda runs, against the persistent
 * local runtime (`cutpoint local up`), the target opened from the route's target binding
 * exactly as the live recovery actions open it, and the source from the ClickHouse
 * binding's url_env (`http(s)://…`, or `chdb:<dir>` for embedded ClickHouse; see
 * delivery-bindings.ts). With --aws: StartExecution of the deployed
 * deliver-window state machine (CUTPOINT_DELIVER_WINDOW_ARN or --state-machine-arn), the
 * execution named by the invocation id, so re-running the same command never starts a
 * second execution. Either way the output is the invocation's recovery projection; exit 0
 * on CUSTODY_RELEASED, else the projection on stdout, the one safe next command on stderr
 * (`delivery.needs_recovery`) and exit 1.
 */

const FLOW = 'deliver-window';

/** The flow failed before anything was journaled (e.g. a refused begin). */
export class DeliveryRunFailedError extends CutpointError {
  constructor(message: string) {
    super('Delivery.RunFailed', 'delivery.run_failed', message);
  }
}

export interface RunDeliverWindowOptions {
  ports: Ports;
  target: TargetPort;
  source: SourcePort;
  input: BeginInput;
  /** Retry pauses in ms; undefined keeps the ASL's own intervals. */
  retryIntervalMs?: number;
  onEvent?: (event: FlowEvent) => void;
}

/** The deliver-window flow through the local runner; the route comes from each Task's input, as in Lambda. */
export function runDeliverWindow(options: RunDeliverWindowOptions): Promise<FlowResult> {
  const { ports, target, source } = options;
  return runFlow(FLOW, options.input, {
    ports,
    ...(options.retryIntervalMs === undefined ? {} : { retryIntervalMs: options.retryIntervalMs }),
    ...(options.onEvent ? { onEvent: options.onEvent } : {}),
    stepDeps: (event) => Promise.resolve({ ports, target, mode: TRANSACTION_MODE, source, route: routeOfEvent(event) }),
  });
}

/** The one safe next command for a projection, as an operator types it. */
export function nextCommand(projection: RecoveryProjection, selector: string): string {
  const action = projection.permitted_actions[0];
  const id = projection.invocation_id;
  return action === undefined
    ? `npx cutpoint delivery inspect ${id} --format json`
    : `npx cutpoint delivery ${action} ${id} --manifest ${selector} --yes --format json`;
}

const OPTIONS = {
  manifest: { type: 'string' },
  'invocation-id': { type: 'string' },
  ...AWS_OPTIONS,
  faults: { type: 'string' },
  'state-machine-arn': { type: 'string' },
} as const;

export async function deliveryRunCommand(args: string[]): Promise<unknown> {
  const { values, positionals } = parseOptions(args, OPTIONS);
  if (positionals.length) throw unexpectedArgument(positionals[0]);
  if (typeof values.manifest !== 'string') throw new UsageError('delivery run needs --manifest FILE#ROUTE');
  // Every refusal of the grammar (exit 2) before anything is read or started.
  const runtime = runtimeOf(values, values.aws ? FLOW : undefined);
  try {
    return await runRoute(runtime, { ...values, manifest: values.manifest });
  } finally {
    runtime.done();
  }
}

async function runRoute(
  runtime: Runtime,
  values: { manifest: string; 'invocation-id'?: string; faults?: string },
): Promise<unknown> {
  const invocationId =
    values['invocation-id'] === undefined
      ? invocationIdFrom(new Uint8Array(randomBytes(16)))
      : validateInvocationId(values['invocation-id']);
  const given = parseSelector(values.manifest);
  const selector = selectorText({ file: resolve(given.file), route: given.route });
  const manifestText = await readManifestFile(resolve(given.file));
  const route: SelectedRoute = selectRoute(parseManifest(manifestText, resolve(given.file)), given);
  const input: BeginInput = { invocationId, session: `run-${invocationId.slice(4, 18)}`, manifestText, selector };
  const run = {
    manifestText,
    selector,
    route,
    targetId: targetIdOf(route.route.target.binding, route.route.target.table),
  };
  // An id that already has a journal must be this route of this manifest: refused before
  // any binding is resolved, any connection opened or any flow started.
  await assertRunnable(await runtime.ports(), invocationId, run);

  progress(`invocation ${invocationId}, route ${route.name}`);
  let result: RunResult;
  if (runtime.kind === 'aws') {
    // The execution is named by the invocation id: a second start is the same execution.
    result = await runtime.run(FLOW, invocationId, input);
  } else {
    const lock = await runLock(invocationId);
    try {
      result = await runLocally(runtime, route, input);
    } finally {
      await lock();
    }
  }
  // Never report another route's invocation as this run's result (a concurrent begin of the same id).
  await assertRunnable(await runtime.ports(), invocationId, run);
  return await outcomeOf(await runtime.ports(), invocationId, selector, result);
}

/**
 * One `delivery run` of an invocation at a time on this machine (an exclusive lock file
 * under the runtime's state directory): a second one while the first runs is refused —
 * the invocation is alive, and no action may fight it — naming how to watch it.
 */
async function runLock(invocationId: string): Promise<() => Promise<void>> {
  const lock = await tryLock(join(defaultStateDir(), 'runs', `${invocationId}.lock`));
  if (lock.held) return lock.release;
  throw new CutpointError(
    'Delivery.InvocationRunning',
    'delivery.invocation_running',
    `invocation ${invocationId} is running in another process on this machine${lock.holder ? ` (pid ${lock.holder})` : ''}; nothing was started; watch it with: npx cutpoint delivery inspect ${invocationId} --format json`,
  );
}

/** The local runner over the route's target and source, opened as the live recovery actions open them. */
async function runLocally(runtime: Runtime, route: SelectedRoute, input: BeginInput): Promise<RunResult> {
  const ports = await runtime.ports();
  const targetPort = await openLocalTarget(route.targetBinding, runtime.faults());
  try {
    const note = failureNote();
    const source = await openLocalSource(route.sourceBinding, note);
    try {
      const result: RunResult = await runDeliverWindow({
        ports,
        target: notingTargetCheck(targetPort, note),
        source,
        input,
        onEvent: flowProgress,
      });
      // Begin's own diagnostic (a missing target table or column, a missing source table, a busy chdb: directory) is the cause.
      return result.status !== 'SUCCEEDED' && note.failure ? { ...result, refusal: note.failure } : result;
    } finally {
      await source.close();
    }
  } finally {
    await targetPort.close();
  }
}

/** Refuses an invocation id sealed to another route or manifest; a new id, or this route's own, passes. */
async function assertRunnable(
  ports: Ports,
  invocationId: string,
  run: Parameters<typeof assertSealedForRun>[1],
): Promise<void> {
  let record;
  try {
    record = await loadInvocation(ports, invocationId);
  } catch (error) {
    if (error instanceof JournalUnavailableError && error.missing) return;
    throw error;
  }
  assertSealedForRun(record, run);
}

interface RunResult {
  status: string;
  error?: string;
  cause?: string;
  /** Locally: the first diagnostic Begin's read-only checks (target, source) or the source raised during the run. */
  refusal?: CutpointError;
}

/** Why the flow failed, as one line: the step's error name and its message (a Lambda cause is JSON). */
function causeOf(result: RunResult): string {
  if (result.refusal) return `${result.refusal.code}: ${result.refusal.message}`;
  return `${result.error ?? result.status}${result.cause ? `: ${causeMessage(result.cause)}` : ''}`;
}

async function outcomeOf(
  ports: Ports,
  invocationId: string,
  selector: string,
  result: RunResult,
): Promise<RecoveryProjection> {
  let projection: RecoveryProjection;
  try {
    projection = await inspectInvocation(ports, invocationId);
  } catch (error) {
    if (result.status === 'SUCCEEDED' || !(error instanceof JournalUnavailableError && error.missing)) throw error;
    // Refused before anything was journaled: the refusal's own diagnostic when a check or
    // the source raised it (e.g. delivery.target_table_missing, delivery.source_table_missing),
    // else the flow's error and cause.
    if (result.refusal) throw result.refusal;
    throw new DeliveryRunFailedError(
      `${FLOW} ended ${result.status} (${causeOf(result)}) before invocation ${invocationId} was journaled; nothing to recover`,
    );
  }
  if (projection.state === 'CUSTODY_RELEASED') return projection;
  printResult(projection);
  throw new NeedsRecoveryError(
    `invocation ${invocationId} stopped in ${projection.state} (${causeOf(result)}); custody is ${projection.holds_custody ? 'held' : 'not held'}; next: ${nextCommand(projection, selector)}`,
  );
}
