import { openRouteTargetFor, openSourceFor, openTargetFor } from '../../adapters/delivery-bindings.js';
import { faultsFromEnv } from '../../adapters/fault-injector.js';
import { resolveBinding } from '../../delivery/bindings.js';
import type { Binding, SelectedRoute } from '../../domain/delivery/manifest-types.js';
import { CutpointError } from '../../domain/errors.js';
import { ReaderUnreachableError } from '../../domain/quality/errors.js';
import type { SourceChunk, SourcePort } from '../../ports/source.js';
import type { ExchangeTargetPort } from '../../ports/exchange-target.js';
import type { FaultInjector } from '../../ports/faults.js';
import type { TargetPort } from '../../ports/target.js';

/**
 * The route's target and source for a command on this machine (`delivery run`, the live
 * recovery actions, the demo): the connection from the environment variables the binding
 * names (src/delivery/bindings.ts; the values are never printed), opened by the same
 * adapter code a deployed Lambda uses, crossing the command's fault injector (one per
 * command: what fires is reported once, and `@hit` counts every hit). An unset variable is `delivery.binding_env_unset`,
 * naming the variable; nothing was started or mutated.
 */
export async function openLocalTarget(
  binding: Binding,
  faults: FaultInjector = faultsFromEnv(process.env),
): Promise<TargetPort> {
  return openTargetFor(binding, await resolveBinding(binding, { env: process.env }), faults);
}

/**
 * The route's target whatever its kind, for a flow run on this machine: a SQL target as
 * `openLocalTarget`; a ClickHouse target (`mode: exchange`) as its stage and EXCHANGE sides
 * on ONE connection — `http(s)://…` or, on this machine only, `chdb:<dir>` (an existing
 * directory; one process at a time). `target.close()` closes it.
 */
export async function openLocalRouteTarget(
  binding: Binding,
  faults: FaultInjector = faultsFromEnv(process.env),
): Promise<{ target: TargetPort; exchange?: ExchangeTargetPort }> {
  return openRouteTargetFor(binding, await resolveBinding(binding, { env: process.env }), faults, { embedded: true });
}

/**
 * A `mode: exchange` route is governed by ObserveTarget's bounded reader, a SEPARATE process
 * (docs/rules.md#bounded-reader) that connects to the target binding itself. Embedded ClickHouse (`chdb:<dir>`)
 * can be opened by one process only, so the reader could never reach it: the window would be
 * published by the EXCHANGE and its governance stay TARGET_PENDING with custody retained.
 * Refused (`quality.reader_unreachable`) before anything is started, created or written;
 * the message names the variable, never its value. Other routes are not concerned.
 */
export async function assertReaderReachable(
  route: SelectedRoute,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<void> {
  if (route.route.target.mode !== 'exchange') return;
  const binding = route.targetBinding;
  const { url } = await resolveBinding(binding, { env });
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1]?.toLowerCase() ?? 'non-URL';
  if (scheme === 'http' || scheme === 'https') return;
  throw new ReaderUnreachableError(
    route.name,
    `${binding.name}${binding.urlEnv ? ` (${binding.urlEnv})` : ''}`,
    `${scheme}:`,
  );
}

/** The first stable diagnostic a command's ports raised, kept so the command refuses with its own code. */
export interface FailureNote {
  readonly failure: CutpointError | undefined;
  noted<T>(call: () => Promise<T>): Promise<T>;
}

export function failureNote(): FailureNote {
  let failure: CutpointError | undefined;
  return {
    get failure() {
      return failure;
    },
    async noted(call) {
      try {
        return await call();
      } catch (error) {
        if (error instanceof CutpointError) failure ??= error;
        throw error;
      }
    },
  };
}

/** `target` whose read-only check (Begin's, before custody) notes its refusal in `note`. */
export function notingTargetCheck(target: TargetPort, note: FailureNote): TargetPort {
  return Object.assign(Object.create(target) as TargetPort, {
    checkTarget: (request: Parameters<TargetPort['checkTarget']>[0]) => note.noted(() => target.checkTarget(request)),
  });
}

/** A source opened on first use, remembering the diagnostic of its first refusal. */
export interface LocalSource extends SourcePort {
  /** The first stable diagnostic the source raised (opening or querying), if any. */
  readonly failure: CutpointError | undefined;
}

/**
 * The source: `http(s)://…` or, on this machine only, embedded chdb `chdb:<dir>`. The
 * binding is resolved now (an unset variable is refused before anything starts), but the
 * source is opened only when a step first calls it — Begin's read-only check, after the
 * refusals that need no connection — so a refused run opens nothing and creates nothing
 * (not even a `chdb:` data directory).
 */
export async function openLocalSource(binding: Binding, note: FailureNote = failureNote()): Promise<LocalSource> {
  const settings = await resolveBinding(binding, { env: process.env });
  let opening: Promise<SourcePort> | undefined;
  const noted = <T>(call: () => Promise<T>): Promise<T> => note.noted(call);
  const open = () => noted(() => (opening ??= openSourceFor(binding, settings, { embedded: true })));
  return {
    get failure() {
      return note.failure;
    },
    describe: (request) => noted(async () => (await open()).describe(request)),
    countWindow: (request) => noted(async () => (await open()).countWindow(request)),
    countBuckets: (request) => noted(async () => (await open()).countBuckets(request)),
    streamWindow(request) {
      return {
        async *[Symbol.asyncIterator](): AsyncGenerator<SourceChunk> {
          const iterator = (await open()).streamWindow(request)[Symbol.asyncIterator]();
          let done = false;
          try {
            for (;;) {
              const step = await noted(() => iterator.next());
              if (step.done) {
                done = true;
                return;
              }
              yield step.value;
            }
          } finally {
            // An early exit stops the inner query.
            if (!done) await iterator.return?.();
          }
        },
      };
    },
    async close() {
      if (!opening) return;
      await (await opening.catch(() => undefined))?.close();
    },
  };
}
