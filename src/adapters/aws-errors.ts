import { UnreachableError } from '../domain/errors.js';

/**
 * The SDK's connection failures, classified in one place: a request that never got a
 * connection to AWS (refused, no route, no DNS answer, or the connect timeout — the SDK's
 * "did not establish a connection") reached nothing, so nothing was read or changed.
 * An operator's command (the CLI's `--aws`) gets `aws.unreachable` with the next step
 * instead of an internal error or the local runtime's advice; deployed Lambdas keep the
 * SDK's errors, which their flows retry.
 */

const NO_CONNECTION = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
]);

/** Whether `error` (or what it wraps) says no connection was ever established. */
export function isNoConnection(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && typeof current === 'object' && current !== null; depth++) {
    const e = current as { code?: unknown; name?: unknown; message?: unknown; errors?: unknown; cause?: unknown };
    if (typeof e.code === 'string' && NO_CONNECTION.has(e.code)) return true;
    if (
      e.name === 'TimeoutError' &&
      typeof e.message === 'string' &&
      e.message.includes('did not establish a connection')
    )
      return true;
    if (Array.isArray(e.errors) && e.errors.some(isNoConnection)) return true;
    current = e.cause;
  }
  return false;
}

export class AwsUnreachableError extends UnreachableError {
  constructor(service: string, region: string) {
    super(
      'aws.unreachable',
      `no connection to ${service} in ${region} could be established, so nothing was read or changed: check the endpoint (AWS_ENDPOINT_URL or a service's own, if set), the region and the network (proxy, VPN, firewall), then run the command again`,
    );
  }
}

interface WithMiddleware {
  middlewareStack: {
    add: (middleware: never, options: { step: 'initialize'; name: string; priority: 'high' }) => void;
  };
}

/** `client` whose calls that never got a connection end as AwsUnreachableError (after the SDK's own retries). */
export function classifyUnreachable<C>(client: C, service: string, region: string): C {
  const middleware = (next: (args: unknown) => Promise<unknown>) => async (args: unknown) => {
    try {
      return await next(args);
    } catch (error) {
      throw isNoConnection(error) ? new AwsUnreachableError(service, region) : error;
    }
  };
  (client as unknown as WithMiddleware).middlewareStack.add(middleware as never, {
    step: 'initialize',
    name: 'cutpointUnreachable',
    priority: 'high',
  });
  return client;
}
