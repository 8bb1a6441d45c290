import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ConnectionCache } from '../../functions/lib/connection-cache.js';
import { openRouteTargetFor } from '../../src/adapters/delivery-bindings.js';
import { FaultSwitch } from '../../src/adapters/fault-injector.js';
import type { Binding } from '../../src/domain/delivery/manifest-types.js';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../src/local/embedded-postgres.js';
import type { ExchangeTargetPort } from '../../src/ports/exchange-target.js';
import type { TargetPort } from '../../src/ports/target.js';
import { cachedSecrets, SecretStore } from '../support/secret-store.js';

/**
 * A deployed step's connections follow their secret (functions/lib/connection-cache.ts over
 * the secret cache, Powertools' SecretsProvider: secrets.ts), against the real embedded PostgreSQL server (password
 * authentication; PGlite has none): the role's password changes (ALTER ROLE) and so does
 * the secret; the next use after the TTL, or after the server refused the old password,
 * connects with the new one. The secret store answers a real Secrets Manager client
 * (test/support/secret-store.ts), not AWS.
 */

type RouteTarget = { target: TargetPort; exchange?: ExchangeTargetPort };
const TTL_MS = 300_000;
let server: EmbeddedPostgres;
let admin: pg.Client;

beforeAll(async () => {
  server = await startEmbeddedPostgres({ engine: 'postgres' });
  admin = new pg.Client(server.connectionString);
  admin.on('error', () => undefined);
  await admin.connect();
}, 120_000);

afterEach(() => {
  vi.useRealTimers();
});

afterAll(async () => {
  await admin?.end();
  await server?.stop();
});

async function world(role: string) {
  await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD 'first-password'`);
  const arn = `arn:aws:secretsmanager:eu-west-1:111111111111:secret:cutpoint/delivery/target/${role}`;
  const binding: Binding = { name: 'warehouse', kind: 'postgres', secretArn: arn };
  const store = new SecretStore();
  const secretOf = (password: string) => ({
    url: `postgres://${server.host}:${server.port}/postgres`,
    username: role,
    password,
  });
  store.values.set(arn, secretOf('first-password'));
  const { secrets, advance } = cachedSecrets(store, TTL_MS);
  const connections = new ConnectionCache<RouteTarget>({ secrets }, (opened) => opened.target);
  const closed: TargetPort[] = [];
  const open = () =>
    connections.get(binding, async (settings) => {
      const opened = openRouteTargetFor(binding, settings, new FaultSwitch());
      const { target } = await opened;
      const close = target.close.bind(target);
      target.close = () => (closed.push(target), close());
      return opened;
    });
  return {
    store,
    closed,
    open,
    advance,
    /** The password changes on the server and in the secret. */
    rotate: async (password: string) => {
      await admin.query(`ALTER ROLE ${role} PASSWORD '${password}'`);
      store.values.set(arn, secretOf(password));
    },
  };
}

describe('connections follow a rotated secret', () => {
  it('the next use after the TTL re-reads the secret, closes the old connection and connects with the new password', async () => {
    const w = await world('rotated_by_ttl');
    const first = await w.open();
    expect((await first.target.identity()).principal).toBe('rotated_by_ttl');

    await w.rotate('second-password');
    // Within the TTL (up to and including it): the same connection (its session outlives the password change), no read.
    w.advance(TTL_MS);
    expect(await w.open()).toBe(first);
    expect(w.store.reads).toBe(1);

    w.advance(1);
    const second = await w.open();
    expect(second).not.toBe(first);
    expect(w.store.reads).toBe(2);
    expect(w.closed).toHaveLength(1);
    expect((await second.target.identity()).principal).toBe('rotated_by_ttl');
    await second.target.close();
  }, 120_000);

  it('an authentication failure drops the connection and the cached secret: the next use, within the TTL, re-reads and connects', async () => {
    const w = await world('rotated_by_failure');
    // Opened with the first secret; the pool connects on first use.
    const first = await w.open();
    await w.rotate('second-password');

    const refused = await first.target.identity().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toMatchObject({ name: 'Cutpoint.TargetUnavailable', cause: { code: '28P01' } });
    expect(w.closed).toHaveLength(1);

    // No time has passed: only the failure makes the cache re-read the secret.
    const second = await w.open();
    expect(second).not.toBe(first);
    expect(w.store.reads).toBe(2);
    expect((await second.target.identity()).principal).toBe('rotated_by_failure');
    await second.target.close();
  }, 120_000);
});
