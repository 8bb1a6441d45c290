import { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { Metrics } from '@aws-lambda-powertools/metrics';
import type { Tracer } from '@aws-lambda-powertools/tracer';
import type * as TracerMiddleware from '@aws-lambda-powertools/tracer/middleware';
import middy from '@middy/core';
import { ConfigError } from '../../src/domain/errors.js';
import { METRIC_NAMESPACE, SERVICE_NAME, STEP_NAME_ENV } from '../../src/telemetry/metric-names.js';
import { invocationKeysOf } from '../../src/telemetry/log-keys.js';
import { isCliProcess } from '../../src/telemetry/process-role.js';
import { recordEnd } from './telemetry-metrics.js';
import { currentInvocation, runInvocation } from './telemetry-invocation.js';
import { redactingOnError } from './telemetry-redact.js';
import type { StepHandler } from '../../src/registry/handler-contract.js';

/**
 * Logs, metrics and traces of every handler, in one place: the handler skeletons (step,
 * notifyStep, deliveryStep, readerStep) and the recovery dispatcher (with its own
 * observer: functions/recovery/dispatch-telemetry.ts) build their middy handler with `lambdaHandler`.
 * In a deployed Lambda (AWS_LAMBDA_FUNCTION_NAME is set) the middleware list is
 * Powertools' logger (allowlisted keys, never the event), tracer (X-Ray, SDK clients
 * captured; off outside Lambda by Powertools' own rule) and our metrics/log middleware
 * (EMF per src/telemetry/metric-names.ts), then the redacting onError. Outside Lambda (the
 * local runner, the CLI — even where AWS_LAMBDA_FUNCTION_NAME is set —, tests that do not
 * opt in) only the redaction runs: the CLI's stdout stays one JSON document and nothing
 * talks to X-Ray.
 *
 * The tracer is imported only in Lambda, on a handler's first call: it loads the X-Ray SDK,
 * whose context (cls-hooked) installs a process-wide async hook with destroy tracking on
 * every promise. Imported statically, every process that loads a handler (the CLI's local
 * flows, the test suite) paid for it: stream schedules ran 20 % slower (35 s against 28 s
 * for 100).
 */

export interface Instruments {
  logger: Logger;
  metrics: Metrics;
  tracer: Tracer;
}

let instruments: Instruments | undefined;
let tracerMiddleware: typeof TracerMiddleware | undefined;

/** Powertools' instances, built once per process, on a handler's first call in Lambda. */
async function instrumentsOnce(): Promise<Instruments> {
  if (!instruments) {
    const [{ Tracer: TracerClass }, middleware] = await Promise.all([
      import('@aws-lambda-powertools/tracer'),
      import('@aws-lambda-powertools/tracer/middleware'),
    ]);
    const metrics = new Metrics({ namespace: METRIC_NAMESPACE, serviceName: SERVICE_NAME });
    // Dimensions are the contract's only (no `service`): every value from a closed set.
    metrics.clearDefaultDimensions();
    tracerMiddleware = middleware;
    instruments ??= {
      logger: new Logger({ serviceName: SERVICE_NAME }),
      metrics,
      tracer: new TracerClass({ serviceName: SERVICE_NAME, captureHTTPsRequests: false }),
    };
  }
  return instruments;
}

/**
 * True in a deployed Lambda (the runtime sets AWS_LAMBDA_FUNCTION_NAME), false in the local
 * runner and always in the CLI's process, whatever its environment says (a CLI run in
 * CodeBuild or a Lambda-like container: src/telemetry/process-role.ts).
 */
export function telemetryActive(env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(env.AWS_LAMBDA_FUNCTION_NAME) && !isCliProcess();
}

/** The step's name (registry placeholder without `FunctionArn`), set by CDK; `Unknown` keeps the dimension a closed set. */
function stepName(env: NodeJS.ProcessEnv): string {
  const name = env[STEP_NAME_ENV];
  return name && /^[A-Za-z0-9]+$/.test(name) ? name : 'Unknown';
}

/**
 * An SDK client, traced by X-Ray in Lambda (Powertools' captureAWSv3Client); unchanged
 * elsewhere. Clients are built inside a handler, after its first call loaded the tracer.
 */
export function instrumentClient<C>(client: C): C {
  if (!telemetryActive()) return client;
  if (!instruments)
    throw new ConfigError(
      'telemetry.tracer_not_loaded',
      'an SDK client was built before any handler call loaded the tracer',
    );
  return instruments.tracer.captureAWSv3Client(client);
}

/** Our middleware: invocation keys on every log line, each cut point logged, the metrics of how the step ended. */
function observe(step: string, { logger, metrics }: Instruments): middy.MiddlewareObj {
  return {
    before: (request) => {
      logger.appendKeys({ step, ...invocationKeysOf(request.event) });
      const invocation = currentInvocation();
      if (invocation) {
        invocation.onCrossed = (cutPoint, outcome) => {
          if (outcome === 'applied') logger.debug('cut point crossed', { cutPoint, outcome });
          else logger.warn('cut point crossed', { cutPoint, outcome });
        };
      }
    },
    after: (request) => {
      const cutPoints = recordEnd(metrics, step, currentInvocation(), request.event, { result: request.response });
      logger.info('step ended', { outcome: 'ok', cutPoints });
    },
    onError: (request) => {
      const error = request.error;
      const cutPoints = recordEnd(metrics, step, currentInvocation(), request.event, { error });
      logger.error('step failed', {
        outcome: 'error',
        cutPoints,
        errorName: error?.name,
        code: (error as { code?: unknown } | null)?.code,
        errorMessage: error?.message,
      });
    },
  };
}

/** What a handler logs and counts of each call, given Powertools' instances (a step's: `observe`). */
export type Observer = (tools: Instruments, env: NodeJS.ProcessEnv) => middy.MiddlewareObj;

const observeStep: Observer = (tools, env) => observe(stepName(env), tools);

/** The middleware list every handler uses, in order (middy runs `onError` in reverse: redaction first). */
export async function telemetry(
  env: NodeJS.ProcessEnv = process.env,
  observer: Observer = observeStep,
): Promise<middy.MiddlewareObj[]> {
  if (!telemetryActive(env)) return [redactingOnError()];
  const tools = await instrumentsOnce();
  return [
    injectLambdaContext(tools.logger, { logEvent: false, resetKeys: true }),
    tracerMiddleware!.captureLambdaHandler(tools.tracer, { captureResponse: false }),
    observer(tools, env),
    redactingOnError(),
  ];
}

/** What middy hands the base handler: the Lambda context when there is one (the local runner passes `{}`). */
export type BaseHandler<O> = (event: unknown, context: { getRemainingTimeInMillis?: () => number }) => Promise<O>;

/**
 * A handler skeleton's middy handler: the base, the telemetry middlewares, one invocation
 * scope per call. The middlewares are chosen on the first call (as Lambda's environment
 * is then), and kept.
 */
export function lambdaHandler<O>(base: BaseHandler<O>, observer?: Observer): StepHandler {
  let handler: Promise<middy.MiddyfiedHandler<unknown, O>> | undefined;
  return (event, context) =>
    runInvocation(async () => {
      handler ??= telemetry(process.env, observer).then((middlewares) =>
        middy<unknown, O>(base as never).use(middlewares),
      );
      return (await handler)(event, (context ?? {}) as never);
    });
}
