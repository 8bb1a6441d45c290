import { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { Tracer } from '@aws-lambda-powertools/tracer';
import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';
import middy from '@middy/core';
import { METRIC_NAMESPACE, SERVICE_NAME, STEP_NAME_ENV } from '../../src/telemetry/metric-names.js';
import { invocationKeysOf } from '../../src/telemetry/log-keys.js';
import { recordEnd } from './telemetry-metrics.js';
import { currentInvocation, runInvocation } from './telemetry-invocation.js';
import { redactingOnError } from './telemetry-redact.js';
import type { StepHandler } from './step.js';

/**
 * Logs, metrics and traces of every handler, in one place: the handler skeletons (step,
 * notifyStep, deliveryStep, readerStep) build their middy handler with `lambdaHandler`.
 * In a deployed Lambda (AWS_LAMBDA_FUNCTION_NAME is set) the middleware list is
 * Powertools' logger (allowlisted keys, never the event), tracer (X-Ray, SDK clients
 * captured; off outside Lambda by Powertools' own rule) and our metrics/log middleware
 * (EMF per src/telemetry/metric-names.ts), then the redacting onError. Outside Lambda (the
 * local runner, the CLI, tests that do not opt in) only the redaction runs: the CLI's
 * stdout stays one JSON document and nothing talks to X-Ray.
 */

export interface Instruments {
  logger: Logger;
  metrics: Metrics;
  tracer: Tracer;
}

let instruments: Instruments | undefined;

/** Powertools' instances, built once per process, on first use in Lambda. */
export function instrumentsOnce(): Instruments {
  if (!instruments) {
    const metrics = new Metrics({ namespace: METRIC_NAMESPACE, serviceName: SERVICE_NAME });
    // Dimensions are the contract's only (no `service`): every value from a closed set.
    metrics.clearDefaultDimensions();
    instruments = { logger: new Logger({ serviceName: SERVICE_NAME }), metrics, tracer: new Tracer({ serviceName: SERVICE_NAME, captureHTTPsRequests: false }) };
  }
  return instruments;
}

/** True in a deployed Lambda (the runtime sets AWS_LAMBDA_FUNCTION_NAME), false in the local runner and the CLI. */
export function telemetryActive(env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(env.AWS_LAMBDA_FUNCTION_NAME);
}

/** The step's name (registry placeholder without `FunctionArn`), set by CDK; `Unknown` keeps the dimension a closed set. */
function stepName(env: NodeJS.ProcessEnv): string {
  const name = env[STEP_NAME_ENV];
  return name && /^[A-Za-z0-9]+$/.test(name) ? name : 'Unknown';
}

/** An SDK client, traced by X-Ray in Lambda (Powertools' captureAWSv3Client); unchanged elsewhere. */
export function instrumentClient<C>(client: C): C {
  return telemetryActive() ? instrumentsOnce().tracer.captureAWSv3Client(client) : client;
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
      logger.error('step failed', { outcome: 'error', cutPoints, errorName: error?.name, code: (error as { code?: unknown } | null)?.code, errorMessage: error?.message });
    },
  };
}

/** The middleware list every handler uses, in order (middy runs `onError` in reverse: redaction first). */
export function telemetry(env: NodeJS.ProcessEnv = process.env): middy.MiddlewareObj[] {
  if (!telemetryActive(env)) return [redactingOnError()];
  const tools = instrumentsOnce();
  return [
    injectLambdaContext(tools.logger, { logEvent: false, resetKeys: true }),
    captureLambdaHandler(tools.tracer, { captureResponse: false }),
    observe(stepName(env), tools),
    redactingOnError(),
  ];
}

/** What middy hands the base handler: the Lambda context when there is one (the local runner passes `{}`). */
export type BaseHandler<O> = (event: unknown, context: { getRemainingTimeInMillis?: () => number }) => Promise<O>;

/** A handler skeleton's middy handler: the base, the telemetry middlewares, one invocation scope per call. */
export function lambdaHandler<O>(base: BaseHandler<O>): StepHandler {
  const handler = middy<unknown, O>(base as never).use(telemetry());
  return (event, context) => runInvocation(() => handler(event, (context ?? {}) as never));
}
