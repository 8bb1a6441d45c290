import { createHash } from 'node:crypto';
import type { SecretCache } from '../../src/adapters/secrets-manager/secret-cache.js';
import { resolveBinding, type ConnectionSettings } from '../../src/delivery/bindings.js';
import type { Binding } from '../../src/domain/delivery/manifest-types.js';
import { isAuthenticationFailure } from '../../src/domain/delivery/auth-failure.js';

/**
 * The open sources and targets of a Lambda container, reused across invocations, and
 * kept in step with their secrets. One job: hand out a connection whose credentials are
 * the secret's current ones.
 *
 * - Keyed by the binding's name and where it points (kind, secret_arn), so two manifests
 *   that reuse a binding name for different secrets never share a connection.
 * - Every use resolves the binding through the secret cache (TTL, secret-cache.ts): within
 *   the TTL that costs nothing; after it the secret is re-read, and when its settings
 *   changed (compared by a SHA-256 fingerprint held in memory, never the values) the old
 *   connection is closed and a new one opened with the new settings.
 * - A connection whose database refuses its credentials (isAuthenticationFailure: the
 *   drivers' codes) is dropped AND its secret forgotten, so the next attempt re-reads the
 *   secret and connects with what it holds then. The failure itself still leaves as it
 *   came (the step's Retry/Catch see the same error).
 * - A failed open is not remembered: the next invocation tries again.
 */
export interface Closable {
  close(): Promise<void>;
}

interface Entry<T> {
  fingerprint: string;
  opening: Promise<T>;
}

export interface ConnectionCacheOptions {
  secrets: SecretCache;
  env?: Readonly<Record<string, string | undefined>>;
}

export class ConnectionCache<T extends object> {
  private readonly entries = new Map<string, Entry<T>>();
  /** One refresh at a time per key: two uses of one binding never open two connections. */
  private readonly turns = new Map<string, Promise<unknown>>();

  constructor(
    private readonly options: ConnectionCacheOptions,
    /** How an opened value closes (a route target: its stage side's close). */
    private readonly closeOf: (value: T) => Closable,
  ) {}

  /** The binding's connection with the secret's current settings; `open` wraps nothing, the cache watches what it returns. */
  get(binding: Binding, open: (settings: ConnectionSettings) => Promise<T>): Promise<T> {
    const key = JSON.stringify([binding.name, binding.kind, binding.secretArn ?? null]);
    const turn = (this.turns.get(key) ?? Promise.resolve()).then(() => this.current(key, binding, open));
    this.turns.set(
      key,
      turn.catch(() => undefined),
    );
    return turn;
  }

  private async current(key: string, binding: Binding, open: (settings: ConnectionSettings) => Promise<T>): Promise<T> {
    const settings = await resolveBinding(binding, {
      env: this.options.env ?? process.env,
      secrets: this.options.secrets,
    });
    const fingerprint = createHash('sha256')
      .update(JSON.stringify([settings.url, settings.username ?? null, settings.password ?? null]))
      .digest('hex');
    const cached = this.entries.get(key);
    if (cached?.fingerprint === fingerprint) return cached.opening;
    // The secret changed (or nothing is open): the superseded connection is closed first.
    if (cached) await this.drop(key, cached);
    const entry: Entry<T> = {
      fingerprint,
      opening: open(settings).then((value) => watchAuthFailures(value, () => this.onAuthFailure(key, entry, binding))),
    };
    this.entries.set(key, entry);
    entry.opening.catch(() => {
      if (this.entries.get(key) === entry) this.entries.delete(key);
    });
    return entry.opening;
  }

  private async onAuthFailure(key: string, entry: Entry<T>, binding: Binding): Promise<void> {
    if (binding.secretArn !== undefined) this.options.secrets.invalidate(binding.secretArn);
    await this.drop(key, entry);
  }

  /** Forgets `entry` (only if it is still the current one) and closes it; a close that fails changes nothing (the connection is gone either way). */
  private async drop(key: string, entry: Entry<T>): Promise<void> {
    if (this.entries.get(key) === entry) this.entries.delete(key);
    await entry.opening.then((value) => this.closeOf(value).close()).catch(() => undefined);
  }
}

/**
 * `value` with every method's failure inspected: an authentication failure calls
 * `onAuthFailure` (once per failure) before the error is rethrown unchanged. Covers
 * methods that return promises and async iterables (a source's streamed window); nested
 * objects (a route target's two sides) are watched too. `close` is passed through.
 */
export function watchAuthFailures<V extends object>(value: V, onAuthFailure: () => Promise<void>): V {
  // One proxy per nested object, so `deps.target === deps.target` stays true.
  const nested = new WeakMap<object, object>();
  const inspect = async (error: unknown): Promise<never> => {
    if (isAuthenticationFailure(error)) await onAuthFailure();
    throw error;
  };
  return new Proxy(value, {
    get(target, property, receiver) {
      const member: unknown = Reflect.get(target, property, receiver);
      if (property === 'close' || property === 'then')
        return typeof member === 'function' ? member.bind(target) : member;
      if (typeof member === 'function') {
        // The ports' methods are async: a failure arrives as a rejection (or from an iterator).
        return (...args: unknown[]) => {
          const result: unknown = (member as (...a: unknown[]) => unknown).apply(target, args);
          if (result instanceof Promise) return result.catch(inspect);
          if (result && typeof result === 'object' && Symbol.asyncIterator in result)
            return watchIterable(result as AsyncIterable<unknown>, inspect);
          return result;
        };
      }
      if (member && typeof member === 'object' && !Array.isArray(member)) {
        let watched = nested.get(member);
        if (!watched) nested.set(member, (watched = watchAuthFailures(member, onAuthFailure)));
        return watched;
      }
      return member;
    },
  });
}

function watchIterable<I>(iterable: AsyncIterable<I>, inspect: (error: unknown) => Promise<never>): AsyncIterable<I> {
  return {
    [Symbol.asyncIterator]() {
      const iterator = iterable[Symbol.asyncIterator]();
      return {
        next: () => iterator.next().catch(inspect),
        return: (value?: unknown) =>
          iterator.return
            ? iterator.return(value as never).catch(inspect)
            : Promise.resolve({ done: true as const, value: value as never }),
        throw: (error?: unknown) =>
          iterator.throw ? iterator.throw(error).catch(inspect) : Promise.reject(error as Error),
      };
    },
  };
}
