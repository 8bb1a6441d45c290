import { afterEach, describe, expect, it, vi } from 'vitest';
import { DEFAULT_SECRET_TTL_SECONDS, secretTtlMsFromEnv } from '../../src/adapters/secrets-manager/secret-cache.js';
import { ConfigError } from '../../src/domain/errors.js';
import { SecretUnavailableError } from '../../src/domain/secrets.js';
import { cachedSecrets, SecretStore } from '../support/secret-store.js';

const ARN = 'arn:aws:secretsmanager:eu-west-1:111111111111:secret:cutpoint/delivery/target/warehouse';
const MINUTE = 60_000;

function world(ttlMs = 5 * MINUTE) {
  const store = new SecretStore();
  store.values.set(ARN, { password: 'first' });
  const { secrets: cache, advance } = cachedSecrets(store, ttlMs);
  return { store, cache, advance };
}

afterEach(() => {
  vi.useRealTimers();
});

/** The secret cache of secrets.ts (Powertools Parameters' SecretsProvider over our client). */
describe('the secret cache', () => {
  it('reads a secret once within the TTL, and again once the TTL has passed (a rotation reaches a warm container)', async () => {
    const { store, cache, advance } = world();
    expect(await cache.secretJson(ARN)).toEqual({ password: 'first' });
    store.values.set(ARN, { password: 'second' });
    // Powertools keeps a value up to and including its max age; the next millisecond re-reads.
    advance(5 * MINUTE);
    expect(await cache.secretJson(ARN)).toEqual({ password: 'first' });
    expect(store.reads).toBe(1);
    advance(1);
    expect(await cache.secretJson(ARN)).toEqual({ password: 'second' });
    expect(store.reads).toBe(2);
    // The TTL restarts from the new read.
    advance(5 * MINUTE);
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
    // One forced read: the new value is cached again.
    await cache.secretJson(ARN);
    expect(store.reads).toBe(2);
  });

  it('an invalidated secret whose re-read fails is re-read again by the next use, never served from before', async () => {
    const { store, cache } = world();
    await cache.secretJson(ARN);
    store.values.set(ARN, { password: 'second' });
    cache.invalidate(ARN);
    store.failNext = true;
    await expect(cache.secretJson(ARN)).rejects.toMatchObject({
      code: 'delivery.binding_secret_unavailable',
      reason: 'unreachable',
    });
    expect(await cache.secretJson(ARN)).toEqual({ password: 'second' });
    expect(store.reads).toBe(3);
  });

  it('does not remember a failed read, and reports it as the port does (SecretUnavailableError naming the secret only)', async () => {
    const { store, cache } = world();
    store.failNext = true;
    const failure = await cache.secretJson(ARN).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(SecretUnavailableError);
    expect(failure).toMatchObject({
      message: expect.stringContaining('cutpoint/delivery/target/warehouse') as unknown,
    });
    expect((failure as Error).message).not.toContain('111111111111');
    expect((failure as Error).message).not.toContain('service unavailable');
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
