import type { Binding } from '../domain/delivery/manifest-types.js';
import { ConfigError } from '../domain/errors.js';
import { SecretUnavailableError, secretNameOf } from '../domain/secrets.js';
import { type SecretsPort } from '../ports/secrets.js';

/**
 * The one place that turns a manifest binding into connection settings. A binding only
 * NAMES where its values live (manifest-bindings.ts); this reads them, and no message it writes
 * ever contains one.
 *
 * Where the values come from — decided by where we run, never mixed:
 * - Locally (no `secrets` port: the CLI, tests, the local flow): the environment.
 *   `url_env` is required and its variable must be set and non-empty; `username_env` and
 *   `password_env` are optional and a named variable that is unset (or empty) means "no
 *   username/password", as the CLI has always read them. `secret_arn` is ignored: a local
 *   run never calls Secrets Manager.
 * - On AWS (a `secrets` port: a deployed Lambda): the Secrets Manager secret `secret_arn`
 *   names, which is then required. The `*_env` variables are ignored even when set: a
 *   Lambda's environment is stored in plain text in its configuration, so credentials
 *   must never come from there, and a stray variable must not silently redirect a route.
 *
 * The secret's SecretString is a JSON object; accepted keys (others are ignored, so an
 * RDS-managed secret with `engine`, `dbInstanceIdentifier`, … works as is):
 * - `url` — the connection, in the same form the binding's `url_env` would hold locally
 *   (clickhouse: `https://host:8443`; postgres: `postgres://host:5432/db`; mssql:
 *   `mssql://host:1433/db?encrypt=true` or an ADO.NET connection string).
 *   `connectionString` is accepted as an alias; giving both is refused.
 * - or, for postgres and mssql only, the RDS shape `host` (+ optional `port`, `dbname`):
 *   the URL is built as `postgres://host:port/dbname` / `mssql://host:port/dbname`.
 * - `username`, `password` — optional strings, kept apart from the URL (the adapters pass
 *   them to the driver).
 *
 * Every failure is a `Cutpoint.ConfigError` (a deployed step fails its cold start, which
 * the flow already catches) with a stable code:
 * - `delivery.binding_env_missing` — locally, the binding names no `url_env`;
 * - `delivery.binding_env_unset` — locally, the variable `url_env` names is unset or empty
 *   (the message names the VARIABLE);
 * - `delivery.binding_secret_arn_missing` — on AWS, the binding names no `secret_arn`;
 * - `delivery.binding_secret_unavailable` — the secret is missing, denied, unreachable,
 *   binary or not a JSON object (the message names the binding and the secret's name);
 * - `delivery.binding_secret_invalid` — the secret's JSON lacks `url`/`host` or has a
 *   key of the wrong type (the message names the KEY).
 */

/** What an adapter needs to connect; never printed, never logged. */
export interface ConnectionSettings {
  url: string;
  username?: string;
  password?: string;
}

export interface ResolveBindingOptions {
  /** The process environment (or a plain object in tests); read only when `secrets` is absent. */
  env: Readonly<Record<string, string | undefined>>;
  /** Present exactly when running on AWS: then the binding's `secret_arn` is the only source. */
  secrets?: SecretsPort;
}

export type BindingResolutionCode =
  | 'delivery.binding_env_missing'
  | 'delivery.binding_env_unset'
  | 'delivery.binding_secret_arn_missing'
  | 'delivery.binding_secret_unavailable'
  | 'delivery.binding_secret_invalid';

/** A binding whose settings cannot be resolved; nothing was opened. */
export class BindingUnresolvedError extends ConfigError {
  readonly binding: string;
  constructor(
    code: Exclude<BindingResolutionCode, 'delivery.binding_secret_unavailable'>,
    binding: string,
    message: string,
  ) {
    super(code, `binding ${binding}: ${message}`);
    this.binding = binding;
  }
}

export async function resolveBinding(binding: Binding, options: ResolveBindingOptions): Promise<ConnectionSettings> {
  return options.secrets ? fromSecret(binding, options.secrets) : fromEnv(binding, options.env);
}

function fromEnv(binding: Binding, env: ResolveBindingOptions['env']): ConnectionSettings {
  const variable = binding.urlEnv;
  if (variable === undefined) {
    throw new BindingUnresolvedError(
      'delivery.binding_env_missing',
      binding.name,
      'names no url_env; a local run reads its connection from the environment',
    );
  }
  const url = env[variable];
  if (url === undefined || url.trim() === '') {
    throw new BindingUnresolvedError(
      'delivery.binding_env_unset',
      binding.name,
      `its connection variable ${variable} (url_env) is not set`,
    );
  }
  const optional = (name: string | undefined): string | undefined => {
    const value = name === undefined ? undefined : env[name];
    return value === undefined || value === '' ? undefined : value;
  };
  return settings(url, optional(binding.usernameEnv), optional(binding.passwordEnv));
}

async function fromSecret(binding: Binding, secrets: SecretsPort): Promise<ConnectionSettings> {
  const arn = binding.secretArn;
  if (arn === undefined) {
    throw new BindingUnresolvedError(
      'delivery.binding_secret_arn_missing',
      binding.name,
      'names no secret_arn; a deployed run reads its connection from Secrets Manager',
    );
  }
  let json: Record<string, unknown>;
  try {
    json = await secrets.secretJson(arn);
  } catch (error) {
    // Only our own stable error's facts leave; anything else is reduced to "unreachable".
    if (error instanceof SecretUnavailableError) throw error.forBinding(binding.name);
    throw new SecretUnavailableError(secretNameOf(arn), 'unreachable', 'could not be read', binding.name);
  }
  const invalid = (message: string) =>
    new BindingUnresolvedError(
      'delivery.binding_secret_invalid',
      binding.name,
      `secret ${secretNameOf(arn)}: ${message}`,
    );
  const text = (key: string): string | undefined => {
    if (!Object.hasOwn(json, key) || json[key] === null || json[key] === undefined) return undefined;
    if (typeof json[key] !== 'string') throw invalid(`key ${key} must be a string`);
    return json[key] === '' ? undefined : (json[key] as string);
  };
  const url = text('url');
  const connectionString = text('connectionString');
  if (url !== undefined && connectionString !== undefined)
    throw invalid('holds both url and connectionString; keep one');
  const username = text('username');
  const password = text('password');
  const direct = url ?? connectionString;
  if (direct !== undefined) return settings(direct, username, password);
  if (text('host') !== undefined) return settings(urlOfHost(binding, json, invalid), username, password);
  throw invalid(
    binding.kind === 'clickhouse'
      ? 'has no url (or connectionString) key'
      : 'has no url (or connectionString, or host) key',
  );
}

/** The RDS secret shape: `{ host, port?, dbname?, username, password }`. */
function urlOfHost(binding: Binding, json: Record<string, unknown>, invalid: (message: string) => Error): string {
  const scheme = binding.kind === 'postgres' ? 'postgres' : binding.kind === 'mssql' ? 'mssql' : undefined;
  if (scheme === undefined)
    throw invalid('a clickhouse secret needs a url key (host alone does not say http or https)');
  const host = json.host as string;
  if (!/^[A-Za-z0-9.-]{1,253}$/.test(host)) throw invalid('key host must be a host name');
  const port = json.port;
  if (
    port !== undefined &&
    port !== null &&
    !(typeof port === 'number' && Number.isInteger(port) && port > 0 && port < 65536) &&
    !(typeof port === 'string' && /^\d{1,5}$/.test(port))
  ) {
    throw invalid('key port must be a port number');
  }
  const dbname = json.dbname;
  if (dbname !== undefined && dbname !== null && typeof dbname !== 'string')
    throw invalid('key dbname must be a string');
  const portPart = port === undefined || port === null ? '' : `:${String(port)}`;
  const dbPart = typeof dbname === 'string' && dbname !== '' ? `/${encodeURIComponent(dbname)}` : '';
  return `${scheme}://${host}${portPart}${dbPart}`;
}

function settings(url: string, username: string | undefined, password: string | undefined): ConnectionSettings {
  return { url, ...(username !== undefined ? { username } : {}), ...(password !== undefined ? { password } : {}) };
}
