import { describe, expect, it } from 'vitest';
import { BindingUnresolvedError, resolveBinding, type ResolveBindingOptions } from '../../src/delivery/bindings.js';
import type { Binding } from '../../src/domain/delivery/manifest-types.js';
import { SecretUnavailableError, secretNameOf } from '../../src/domain/secrets.js';
import { type SecretsPort } from '../../src/ports/secrets.js';

// Pure rules: the environment is a plain object and the secrets port an in-memory map.
const ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:warehouse-AbC123';
const CH_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:events-ch';

const pg: Binding = {
  name: 'warehouse',
  kind: 'postgres',
  urlEnv: 'PG_URL',
  usernameEnv: 'PG_USER',
  passwordEnv: 'PG_PASSWORD',
  secretArn: ARN,
};
const ch: Binding = { name: 'events_ch', kind: 'clickhouse', urlEnv: 'CH_URL', secretArn: CH_ARN };

const ENV_URL = 'postgres://env-host:5432/envdb';
const ENV_PASSWORD = 'env-pa55word-XYZ';
const SECRET_URL = 'postgres://secret-host:5432/secretdb';
const SECRET_USER = 'svc_delivery';
const SECRET_PASSWORD = 's3cr3t-VALUE-never-printed';

function memorySecrets(values: Record<string, unknown>): SecretsPort & { reads: string[] } {
  const reads: string[] = [];
  return {
    reads,
    secretJson(arn) {
      reads.push(arn);
      if (!Object.hasOwn(values, arn))
        return Promise.reject(new SecretUnavailableError(secretNameOf(arn), 'not_found', 'does not exist'));
      const value = values[arn];
      return value instanceof Error ? Promise.reject(value) : Promise.resolve(value as Record<string, unknown>);
    },
  };
}

async function failure(
  binding: Binding,
  options: ResolveBindingOptions,
): Promise<{ name: string; code: string; message: string }> {
  const error = await resolveBinding(binding, options).then(
    () => undefined,
    (e: unknown) => e as { name: string; code: string; message: string },
  );
  if (!error) throw new Error('expected resolveBinding to fail');
  return error;
}

describe('resolveBinding locally (no secrets port): the environment', () => {
  it('reads url, username and password from the variables the binding names', async () => {
    const env = { PG_URL: ENV_URL, PG_USER: 'env_user', PG_PASSWORD: ENV_PASSWORD };
    await expect(resolveBinding(pg, { env })).resolves.toEqual({
      url: ENV_URL,
      username: 'env_user',
      password: ENV_PASSWORD,
    });
  });

  it('treats an unset or empty username/password variable as none', async () => {
    await expect(resolveBinding(pg, { env: { PG_URL: ENV_URL, PG_USER: '' } })).resolves.toEqual({ url: ENV_URL });
  });

  it('refuses an unset url variable, naming the VARIABLE and never a value', async () => {
    const error = await failure(pg, { env: { PG_PASSWORD: ENV_PASSWORD, OTHER: ENV_URL } });
    expect(error).toBeInstanceOf(BindingUnresolvedError);
    expect(error).toMatchObject({ name: 'Cutpoint.ConfigError', code: 'delivery.binding_env_unset' });
    expect(error.message).toContain('PG_URL');
    expect(error.message).toContain('warehouse');
    expect(error.message).not.toContain(ENV_PASSWORD);
    expect(error.message).not.toContain(ENV_URL);
  });

  it('refuses an empty url variable like an unset one', async () => {
    await expect(failure(pg, { env: { PG_URL: '  ' } })).resolves.toMatchObject({ code: 'delivery.binding_env_unset' });
  });

  it('refuses a binding without url_env (secret only) locally, without touching Secrets Manager', async () => {
    const { urlEnv: _omit, ...secretOnly } = pg;
    await expect(failure(secretOnly, { env: {} })).resolves.toMatchObject({
      name: 'Cutpoint.ConfigError',
      code: 'delivery.binding_env_missing',
    });
  });

  it('prefers the environment when the binding names both a variable and a secret', async () => {
    await expect(resolveBinding(pg, { env: { PG_URL: ENV_URL } })).resolves.toEqual({ url: ENV_URL });
  });
});

describe('resolveBinding on AWS (a secrets port): the secret', () => {
  it('reads url, username and password from the secret JSON', async () => {
    const secrets = memorySecrets({ [ARN]: { url: SECRET_URL, username: SECRET_USER, password: SECRET_PASSWORD } });
    await expect(resolveBinding(pg, { env: {}, secrets })).resolves.toEqual({
      url: SECRET_URL,
      username: SECRET_USER,
      password: SECRET_PASSWORD,
    });
    expect(secrets.reads).toEqual([ARN]);
  });

  it('prefers the secret when both are present: the environment is ignored even when set', async () => {
    const secrets = memorySecrets({ [ARN]: { url: SECRET_URL, password: SECRET_PASSWORD } });
    const env = { PG_URL: ENV_URL, PG_USER: 'env_user', PG_PASSWORD: ENV_PASSWORD };
    await expect(resolveBinding(pg, { env, secrets })).resolves.toEqual({ url: SECRET_URL, password: SECRET_PASSWORD });
  });

  it('accepts connectionString as an alias of url, and refuses both at once', async () => {
    const alias = memorySecrets({ [ARN]: { connectionString: SECRET_URL } });
    await expect(resolveBinding(pg, { env: {}, secrets: alias })).resolves.toEqual({ url: SECRET_URL });
    const both = memorySecrets({ [ARN]: { url: SECRET_URL, connectionString: SECRET_URL } });
    const error = await failure(pg, { env: {}, secrets: both });
    expect(error).toMatchObject({ code: 'delivery.binding_secret_invalid' });
    expect(error.message).not.toContain(SECRET_URL);
  });

  it('builds the URL from an RDS-shaped secret (host, port, dbname) for postgres and mssql', async () => {
    const rds = {
      engine: 'postgres',
      host: 'db.example.internal',
      port: 5432,
      dbname: 'warehouse',
      username: SECRET_USER,
      password: SECRET_PASSWORD,
    };
    await expect(resolveBinding(pg, { env: {}, secrets: memorySecrets({ [ARN]: rds }) })).resolves.toEqual({
      url: 'postgres://db.example.internal:5432/warehouse',
      username: SECRET_USER,
      password: SECRET_PASSWORD,
    });
    const mssql: Binding = { name: 'warehouse', kind: 'mssql', secretArn: ARN };
    await expect(
      resolveBinding(mssql, {
        env: {},
        secrets: memorySecrets({ [ARN]: { host: 'sql.example.internal', port: '1433' } }),
      }),
    ).resolves.toEqual({
      url: 'mssql://sql.example.internal:1433',
    });
  });

  it('refuses a secret without url (or host), naming the key and never a value', async () => {
    const secrets = memorySecrets({ [ARN]: { username: SECRET_USER, password: SECRET_PASSWORD } });
    const error = await failure(pg, { env: {}, secrets });
    expect(error).toMatchObject({ name: 'Cutpoint.ConfigError', code: 'delivery.binding_secret_invalid' });
    expect(error.message).toContain('warehouse');
    expect(error.message).toContain('url');
    expect(error.message).not.toContain(SECRET_PASSWORD);
    expect(error.message).not.toContain(SECRET_USER);
  });

  it('refuses a ClickHouse secret that has only a host (http or https is not knowable)', async () => {
    const secrets = memorySecrets({ [CH_ARN]: { host: 'ch.example.internal', password: SECRET_PASSWORD } });
    const error = await failure(ch, { env: {}, secrets });
    expect(error).toMatchObject({ code: 'delivery.binding_secret_invalid' });
    expect(error.message).not.toContain('ch.example.internal');
    expect(error.message).not.toContain(SECRET_PASSWORD);
  });

  it('refuses a key of the wrong type, naming the key and never its value', async () => {
    const secrets = memorySecrets({ [ARN]: { url: SECRET_URL, password: 12345678 } });
    const error = await failure(pg, { env: {}, secrets });
    expect(error).toMatchObject({ code: 'delivery.binding_secret_invalid' });
    expect(error.message).toContain('password');
    expect(error.message).not.toContain('12345678');
    expect(error.message).not.toContain(SECRET_URL);
  });

  it('refuses a binding without secret_arn on AWS, even when its url variable is set', async () => {
    const { secretArn: _omit, ...envOnly } = pg;
    const error = await failure(envOnly, { env: { PG_URL: ENV_URL }, secrets: memorySecrets({}) });
    expect(error).toMatchObject({ name: 'Cutpoint.ConfigError', code: 'delivery.binding_secret_arn_missing' });
    expect(error.message).not.toContain(ENV_URL);
  });

  it('reports a missing or denied secret with the binding and the secret NAME only', async () => {
    const missing = await failure(pg, { env: {}, secrets: memorySecrets({}) });
    expect(missing).toMatchObject({ name: 'Cutpoint.ConfigError', code: 'delivery.binding_secret_unavailable' });
    expect(missing.message).toContain('binding warehouse');
    expect(missing.message).toContain('secret warehouse-AbC123');
    expect(missing.message).not.toContain('123456789012');

    const denied = memorySecrets({
      [ARN]: new SecretUnavailableError(
        'warehouse-AbC123',
        'access_denied',
        'cannot be read by this role (AccessDeniedException)',
      ),
    });
    await expect(failure(pg, { env: {}, secrets: denied })).resolves.toMatchObject({
      code: 'delivery.binding_secret_unavailable',
      reason: 'access_denied',
      binding: 'warehouse',
    });
  });

  it('never lets a foreign error message from the port through', async () => {
    const leaky = memorySecrets({ [ARN]: new Error(`connect failed for ${SECRET_PASSWORD}`) });
    const error = await failure(pg, { env: {}, secrets: leaky });
    expect(error).toMatchObject({ name: 'Cutpoint.ConfigError', code: 'delivery.binding_secret_unavailable' });
    expect(error.message).not.toContain(SECRET_PASSWORD);
    expect(JSON.stringify(error)).not.toContain(SECRET_PASSWORD);
  });

  it('prints a secret_arn that is not an ARN as "(not a secret ARN)"', () => {
    expect(secretNameOf('arn:aws:secretsmanager:eu-west-1:123456789012:secret:events-ch')).toBe('events-ch');
    expect(secretNameOf(SECRET_URL)).toBe('(not a secret ARN)');
  });
});
