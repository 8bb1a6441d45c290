import { ValidationError } from '../domain/errors.js';
import type { Ports } from '../ports/index.js';
import { resolveAppend, type ResolveResult } from './resolve.js';
import { resolveWriter, type WriterResolution } from './resolve-writer.js';

/**
 * The stream-resolve-append flow's Resolve steps: one attempt (`attemptId`, resolve.ts) or
 * every attempt of a LaneWriter that died holding the lane (`writerId`, resolve-writer.ts) —
 * exactly one of them, refused before anything is read otherwise.
 */
export async function resolveLane(input: unknown, ports: Ports): Promise<ResolveResult | WriterResolution> {
  const given = input as { attemptId?: unknown; writerId?: unknown } | null;
  const byAttempt = given?.attemptId !== undefined;
  const byWriter = given?.writerId !== undefined;
  if (byAttempt === byWriter)
    throw new ValidationError(
      'stream.invalid_resolve',
      'resolve takes exactly one of attemptId (one attempt) and writerId (every attempt of a LaneWriter)',
    );
  return byWriter ? resolveWriter(input, ports) : resolveAppend(input, ports);
}
