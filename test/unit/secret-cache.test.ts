import { describe, expect, it } from 'vitest';
import {
  DEFAULT_SECRET_TTL_SECONDS,
  secretTtlMsFromEnv,
  TtlSecretCache,
} from '../../src/adapters/secrets-manager/secret-cache.js';
import { ConfigError } from '../../src/domain/errors.js';
import { SecretUnavailableError } from '../../src/domain/secrets.js';
import { type SecretsPort } from '../../src/ports/secrets.js';

/** A SecretsPort (the port, not AWS) whose values the test sets, counting reads. */
class SecretStore implements SecretsPort {
  readonly values = new Map<string, Record<string, unknown>>();
  reads = 0;
  failNext = false;
  secretJson(arn: string): Promise<Record<string, unknown>> {
    this.reads++;
    if (this.failNext) {
      this.failNext = false;
      return Promise.reject(new SecretUnavailableError('s', 'unreachable', 'did not answer'));
    }
    return Promise.resolve({ ...this.values.get(arn)! });
  }
}

const ARN = 'arn:aws:secretsmanager:eu-west-1:111111111111:secret:cutpoint/delivery/target/warehouse';
const MINUTE = 60_000;

function world(ttlMs = 5 * MINUTE) {
  const store = new SecretStore();
  store.values.set(ARN, { password: 'first' });
  let now = 1_000_000;
  const cache = new TtlSecretCache(store, { ttlMs, now: () => now });
  return { store, cache, advance: (ms: number) => (now += ms) };
}

describe('TtlSecretCache', () => {
  it('reads a secret once within the TTL, and again once the TTL has passed (a rotation reaches a warm container)', async () => {
    const { store, cache, advance } = world();
    expect(await cache.secretJson(ARN)).toEqual({ password: 'first' });
    store.values.set(ARN, { password: 'second' });
    advance(5 * MINUTE - 1);
    expect(await cache.secretJson(ARN)).toEqual({ password: 'first' });
    expect(store.reads).toBe(1);
    advance(1);
    expect(await cache.secretJson(ARN)).toEqual({ password: 'second' });
    expect(store.reads).toBe(2);
    // The TTL restarts from the new read.
    advance(5 * MINUTE - 1);
    await cache.secretJson(ARN);
    expect(store.reads).toBe(2);
  });

  it('invalidate forgets one secret at once: the next use re-reads it within the TTL', async () => {
    const { store, cache } = world();
    await cache.secretJson(ARN);
    store.values.set(ARN, { password: 'second' });
    cache.invalidate(ARN);
    expect(await cache.secretJson(ARN)).toEqual({ password: 'second' });
    expect(store.reads).toBe(2);
  });

  it('does not remember a failed read', async () => {
    const { store, cache } = world();
    store.failNext = true;
    await expect(cache.secretJson(ARN)).rejects.toBeInstanceOf(SecretUnavailableError);
    expect(await cache.secretJson(ARN)).toEqual({ password: 'first' });
    expect(store.reads).toBe(2);
  });

  it('with a TTL of 0 reads on every use', async () => {
    const { store, cache } = world(0);
    await cache.secretJson(ARN);
    await cache.secretJson(ARN);
    expect(store.reads).toBe(2);
  });
});

describe('secretTtlMsFromEnv (CUTPOINT_SECRET_TTL_SECONDS)', () => {
  it('defaults to 5 minutes and reads whole seconds', () => {
    expect(DEFAULT_SECRET_TTL_SECONDS).toBe(300);
    expect(secretTtlMsFromEnv({})).toBe(300_000);
    expect(secretTtlMsFromEnv({ CUTPOINT_SECRET_TTL_SECONDS: '' })).toBe(300_000);
    expect(secretTtlMsFromEnv({ CUTPOINT_SECRET_TTL_SECONDS: '60' })).toBe(60_000);
    expect(secretTtlMsFromEnv({ CUTPOINT_SECRET_TTL_SECONDS: '0' })).toBe(0);
  });

  it.each(['-1', '1.5', 'five', '86401'])('refuses %s with delivery.secret_ttl_invalid', (value) => {
    expect(() => secretTtlMsFromEnv({ CUTPOINT_SECRET_TTL_SECONDS: value })).toThrow(ConfigError);
    expect(() => secretTtlMsFromEnv({ CUTPOINT_SECRET_TTL_SECONDS: value })).toThrow(/CUTPOINT_SECRET_TTL_SECONDS/);
    try {
      secretTtlMsFromEnv({ CUTPOINT_SECRET_TTL_SECONDS: value });
    } catch (error) {
      expect((error as ConfigError).code).toBe('delivery.secret_ttl_invalid');
    }
  });
});
