import { afterEach, describe, expect, it, vi } from 'vitest';
import { ConnectionCache } from '../../functions/lib/connection-cache.js';
import type { Binding } from '../../src/domain/delivery/manifest-types.js';
import { cachedSecrets, SecretStore } from '../support/secret-store.js';

/** The secret store answers a real Secrets Manager client (test/support/secret-store.ts); the "connection" a plain object (no I/O). */
const SECRET = { url: 'https://clickhouse.internal:8443', username: 'reader', password: 'first' };

afterEach(() => {
  vi.useRealTimers();
});

const binding: Binding = {
  name: 'events',
  kind: 'clickhouse',
  secretArn: 'arn:aws:secretsmanager:eu-west-1:111111111111:secret:cutpoint/delivery/source/events',
};
const authFailed = Object.assign(new Error('Code: 516. AUTHENTICATION_FAILED'), {
  code: '516',
  type: 'AUTHENTICATION_FAILED',
});

interface FakeSource {
  password: string;
  closed: boolean;
  count(): Promise<number>;
  stream(fail?: Error): AsyncIterable<number>;
  close(): Promise<void>;
}

function world() {
  const store = new SecretStore();
  store.values.set(binding.secretArn!, { ...SECRET });
  const { secrets, advance } = cachedSecrets(store, 1000);
  const cache = new ConnectionCache<FakeSource>({ secrets }, (s) => s);
  const opened: FakeSource[] = [];
  let failNextOpen = false;
  let nextFailure: Error | undefined;
  const get = () =>
    cache.get(binding, (settings) => {
      if (failNextOpen) {
        failNextOpen = false;
        return Promise.reject(new Error('unreachable'));
      }
      const source: FakeSource = {
        password: settings.password!,
        closed: false,
        count: () => (nextFailure ? Promise.reject(nextFailure) : Promise.resolve(1)),
        async *stream(fail?: Error) {
          yield 1;
          if (fail) throw fail;
        },
        close: () => ((source.closed = true), Promise.resolve()),
      };
      opened.push(source);
      return Promise.resolve(source);
    });
  return {
    store,
    opened,
    get,
    advance,
    failOpen: () => (failNextOpen = true),
    failCalls: (error: Error | undefined) => (nextFailure = error),
  };
}

describe('ConnectionCache', () => {
  it('keeps the connection when the secret re-read after the TTL holds the same settings', async () => {
    const w = world();
    const first = await w.get();
    w.advance(1001); // past the one-second TTL
    expect(await w.get()).toBe(first);
    expect(w.store.reads).toBe(2);
    expect(w.opened).toHaveLength(1);
  });

  it('re-opens with the new settings, closing the old connection, when the secret changed', async () => {
    const w = world();
    const first = await w.get();
    w.store.values.set(binding.secretArn!, { ...SECRET, password: 'second' });
    w.advance(1001); // past the one-second TTL
    const second = await w.get();
    expect(second.password).toBe('second');
    expect(w.opened[0]!.closed).toBe(true);
    expect(first).not.toBe(second);
  });

  it('an authentication failure from a call drops the connection and the secret; the error leaves unchanged', async () => {
    const w = world();
    const first = await w.get();
    w.store.values.set(binding.secretArn!, { ...SECRET, password: 'second' });
    w.failCalls(authFailed);
    await expect(first.count()).rejects.toBe(authFailed);
    expect(w.opened[0]!.closed).toBe(true);
    w.failCalls(undefined);
    const second = await w.get();
    expect(second.password).toBe('second');
    expect(w.store.reads).toBe(2);
  });

  it('an authentication failure while streaming (an async iterator) drops them too', async () => {
    const w = world();
    const first = await w.get();
    const seen: number[] = [];
    await expect(
      (async () => {
        for await (const n of first.stream(authFailed)) seen.push(n);
      })(),
    ).rejects.toBe(authFailed);
    expect(seen).toEqual([1]);
    expect(w.opened[0]!.closed).toBe(true);
  });

  it('any other failure keeps the connection and the secret', async () => {
    const w = world();
    const first = await w.get();
    w.failCalls(Object.assign(new Error('Code: 60. UNKNOWN_TABLE'), { code: '60', type: 'UNKNOWN_TABLE' }));
    await expect(first.count()).rejects.toThrow('UNKNOWN_TABLE');
    expect(w.opened[0]!.closed).toBe(false);
    expect(await w.get()).toBe(first);
    expect(w.store.reads).toBe(1);
  });

  it('does not remember a failed open', async () => {
    const w = world();
    w.failOpen();
    await expect(w.get()).rejects.toThrow('unreachable');
    await w.get();
    expect(w.opened).toHaveLength(1);
  });
});
