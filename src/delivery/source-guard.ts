import { SourceForbiddenError } from '../domain/delivery/source-errors.js';
import type { StreamWindowRequest } from '../domain/delivery/source-types.js';
import type { SourceChunk, SourcePort } from '../ports/source.js';

/** The recovery fence around a delivery source (src/ports/source.ts). */

export type SourceMethod = 'describe' | 'streamWindow' | 'countWindow' | 'countBuckets';

export interface SourceAttempt {
  method: SourceMethod;
  /** True when the fence refused the call (it was armed). */
  refused: boolean;
}

/** A source behind a fence, with a record of every call made through it. */
export interface GuardedSource extends SourcePort {
  /** Every describe/streamWindow/countWindow/countBuckets call (and every iteration step refused), in order. */
  readonly attempts: readonly SourceAttempt[];
  /** Number of refused calls: a recovery test asserts this and `attempts.length` are 0. */
  readonly refusals: number;
}

/**
 * Wraps a source so that, while `armed()` is true, every call throws
 * `SourceForbiddenError` (`Delivery.SourceForbidden`, code `delivery.source_forbidden`)
 * without reaching the source. Recovery flows wrap their source armed: they restore the
 * sealed window and contiguous receipts from the journal and must never query ClickHouse.
 *
 * `streamWindow` is checked when called (it throws at once rather than returning an
 * iterable) and again before every step of an iteration, so an iterable obtained earlier
 * cannot be drained while the fence is armed. `close()` always passes through: closing
 * opens nothing.
 */
export function guardedSource(
  source: SourcePort,
  armed: (method: SourceMethod, request?: StreamWindowRequest) => boolean,
): GuardedSource {
  const attempts: SourceAttempt[] = [];
  let refusals = 0;
  const enter = (method: SourceMethod, request?: StreamWindowRequest): void => {
    const refused = armed(method, request);
    attempts.push({ method, refused });
    if (refused) {
      refusals++;
      throw new SourceForbiddenError(method);
    }
  };
  return {
    get attempts() {
      return attempts;
    },
    get refusals() {
      return refusals;
    },
    async describe(request) {
      enter('describe');
      return source.describe(request);
    },
    async countWindow(request) {
      enter('countWindow');
      return source.countWindow(request);
    },
    async countBuckets(request) {
      enter('countBuckets');
      return source.countBuckets(request);
    },
    streamWindow(request) {
      enter('streamWindow', request);
      const inner = source.streamWindow(request);
      return {
        [Symbol.asyncIterator](): AsyncIterator<SourceChunk> {
          let iterator: AsyncIterator<SourceChunk> | undefined;
          return {
            async next() {
              if (armed('streamWindow', request)) {
                attempts.push({ method: 'streamWindow', refused: true });
                refusals++;
                // Stop the inner iteration (and its query) if one was started.
                await iterator?.return?.();
                throw new SourceForbiddenError('streamWindow');
              }
              iterator ??= inner[Symbol.asyncIterator]();
              return iterator.next();
            },
            async return(value?: unknown) {
              await iterator?.return?.();
              return { done: true, value: value as SourceChunk };
            },
          };
        },
      };
    },
    close() {
      return source.close();
    },
  };
}

/** A source for flows that hold no source at all (recovery): every call is refused. */
export function forbiddenSource(): GuardedSource {
  const never = (): never => {
    throw new SourceForbiddenError('call');
  };
  return guardedSource(
    { describe: never, streamWindow: never, countWindow: never, countBuckets: never, close: async () => {} },
    () => true,
  );
}

/** Where one unfinished part's extraction may read: its window, from the chunk after its last journaled one. */
export interface RemainingRange {
  start: string;
  end: string;
  /** The seq the read must start at: after the last journaled chunk, or the part's first. */
  nextSeq: number;
}

/**
 * The source a continue opens (recovery/continue.ts): only `streamWindow` of an unfinished
 * part's remaining range passes — its exact window, starting at exactly the seq after its
 * last journaled chunk (`resumeAfter.nextSeq`, or `firstSeq` for a part with none). Every
 * other call (describe, counts, another window, a part from its start when it has
 * journaled chunks) is refused and recorded, as `forbiddenSource` refuses everything.
 */
export function remainingRangesSource(source: SourcePort, ranges: readonly RemainingRange[]): GuardedSource {
  const permitted = (request?: StreamWindowRequest): boolean => {
    if (!request) return false;
    const from = request.resumeAfter?.nextSeq ?? request.firstSeq ?? 0;
    return ranges.some((r) => r.start === request.window.start && r.end === request.window.end && r.nextSeq === from);
  };
  return guardedSource(source, (method, request) => method !== 'streamWindow' || !permitted(request));
}

/**
 * A source opened on its first call, by `open` (once): what a resume step is given, so that
 * its source binding is resolved, its secret read and its connection opened only when a
 * continue actually reads (recovery/continue.ts), never for any other resume.
 */
export function lazySource(open: () => Promise<SourcePort>): SourcePort {
  let opened: Promise<SourcePort> | undefined;
  const source = () => (opened ??= open());
  return {
    describe: async (request) => (await source()).describe(request),
    countWindow: async (request) => (await source()).countWindow(request),
    countBuckets: async (request) => (await source()).countBuckets(request),
    streamWindow: (request) => ({
      async *[Symbol.asyncIterator]() {
        yield* (await source()).streamWindow(request);
      },
    }),
    close: async () => {
      if (opened) await (await opened).close();
    },
  };
}
