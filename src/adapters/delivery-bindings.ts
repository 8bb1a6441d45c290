import { isAbsolute, resolve } from 'node:path';
import type { ConnectionSettings } from '../delivery/bindings.js';
import type { Binding } from '../domain/delivery/manifest-types.js';
import { ConfigError, CutpointError } from '../domain/errors.js';
import type { FaultInjector } from '../ports/faults.js';
import type { SourcePort } from '../ports/source.js';
import type { TargetPort } from '../ports/target.js';
import type { ExchangeTargetPort } from '../ports/exchange-target.js';
import { openClickHouse, type ClickHouseHandle } from './clickhouse/client.js';
import { createClickHouseExchangeTarget } from './clickhouse/publication-target.js';
import { createClickHouseStageTarget } from './clickhouse/publication-stage.js';
import { createClickHouseSource } from './clickhouse/source.js';
import { openMssqlTarget } from './mssql/target.js';
import { openPostgresTarget } from './postgres/target.js';
import { openPostgresCensus } from './postgres/census.js';
import type { WindowCensusPort } from '../ports/window-census.js';

/**
 * Opens a route's source and target from RESOLVED settings (src/delivery/bindings.ts):
 * the one adapter-side place that knows how each binding kind's settings reach its
 * driver. No message here contains a URL, a username or a password.
 *
 * Stable codes (all `Cutpoint.ConfigError`; nothing was mutated):
 * - `delivery.binding_kind_invalid` — a source that is not clickhouse, a SQL target
 *   (`openTargetFor`) that is neither postgres nor mssql (parseManifest already refuses
 *   both; a hand-built route may not);
 * - `delivery.binding_url_invalid` — a ClickHouse connection that is not an http(s):// URL
 *   (embedded chdb is for local runs and never loads in a Lambda), or a URL the driver
 *   refuses;
 * - `delivery.source_data_dir_missing` / `delivery.source_busy` — a `chdb:<dir>` that does
 *   not exist (never created here) or that another process holds;
 * - `delivery.binding_credentials_conflict` — a SQL Server ADO.NET connection string
 *   together with a separate username/password (put them in the string, or use an
 *   `mssql://` URL).
 */

/**
 * A ClickHouse source over HTTP (`http(s)://…`; opening is lazy: the first query
 * connects), or — for local runs only (`embedded: true`: the CLI, the demo) — embedded
 * chdb on a data directory, `chdb:<dir>` (relative to the working directory; one process
 * at a time may hold it).
 */
export async function openSourceFor(
  binding: Binding,
  settings: ConnectionSettings,
  options: { embedded?: boolean } = {},
): Promise<SourcePort> {
  if (binding.kind !== 'clickhouse') throw kindInvalid(binding, 'a ClickHouse source');
  return createClickHouseSource(await openClickHouseBinding(binding, settings, options));
}

/** One ClickHouse connection of a binding: http(s) anywhere, `chdb:<dir>` only with `embedded` (never in a Lambda). */
async function openClickHouseBinding(
  binding: Binding,
  settings: ConnectionSettings,
  options: { embedded?: boolean },
): Promise<ClickHouseHandle> {
  const embedded = options.embedded === true && settings.url.startsWith('chdb:');
  if (!embedded && !/^https?:\/\//i.test(settings.url)) {
    throw new ConfigError(
      'delivery.binding_url_invalid',
      `binding ${binding.name}: the ClickHouse connection must be an http(s):// URL${options.embedded ? ' or chdb:<dir>' : ''}`,
    );
  }
  const dataDir = embedded ? settings.url.slice('chdb:'.length).replace(/^\/\/(?=\/)/, '') : '';
  if (embedded && dataDir === '')
    throw new ConfigError(
      'delivery.binding_url_invalid',
      `binding ${binding.name}: embedded ClickHouse needs a data directory (chdb:<dir>)`,
    );
  try {
    return await openClickHouse(
      embedded
        ? { kind: 'embedded', dataDir: isAbsolute(dataDir) ? dataDir : resolve(dataDir), create: false }
        : {
            kind: 'http',
            url: settings.url,
            ...(settings.username !== undefined ? { username: settings.username } : {}),
            ...(settings.password !== undefined ? { password: settings.password } : {}),
          },
    );
  } catch (error) {
    // Our own diagnostics name the real cause (a missing or busy chdb: directory).
    if (error instanceof CutpointError) throw new ConfigError(error.code, `binding ${binding.name}: ${error.message}`);
    // The driver's message may quote the URL: only the binding's name leaves.
    throw new ConfigError(
      'delivery.binding_url_invalid',
      `binding ${binding.name}: the ClickHouse client refused the connection settings`,
    );
  }
}

/**
 * A route's publication target, whatever its kind: a SQL target (postgres, mssql) as
 * `openTargetFor` opens it; a ClickHouse target (`mode: exchange`, docs/rules.md#exchange-publication) as ONE
 * connection serving both sides — the stage (`TargetPort`: createStaging, loads, VerifyEof,
 * cleanup) and the EXCHANGE side (candidate, the one EXCHANGE, observation by UUID).
 * `target.close()` closes that one connection. http(s) anywhere; `chdb:<dir>` only with
 * `embedded` (local runs).
 */
export async function openRouteTargetFor(
  binding: Binding,
  settings: ConnectionSettings,
  faults: FaultInjector,
  options: { embedded?: boolean } = {},
): Promise<{ target: TargetPort; exchange?: ExchangeTargetPort }> {
  if (binding.kind !== 'clickhouse') return { target: openTargetFor(binding, settings, faults) };
  const handle = await openClickHouseBinding(binding, settings, options);
  return {
    target: createClickHouseStageTarget(handle, faults),
    exchange: createClickHouseExchangeTarget(handle, faults),
  };
}

/**
 * The route's target. Credentials kept apart from the URL complete it: for postgres as
 * pool settings (which win over any in the URL), for mssql inside an `mssql://` URL
 * (replacing any there).
 */
export function openTargetFor(binding: Binding, settings: ConnectionSettings, faults: FaultInjector): TargetPort {
  switch (binding.kind) {
    case 'postgres':
      return openPostgresTarget({ connectionString: postgresConnection(binding, settings), faults });
    case 'mssql':
      return openMssqlTarget({ connection: mssqlConnection(binding, settings), faults });
    default:
      // A ClickHouse target has two sides on one connection: openRouteTargetFor.
      throw kindInvalid(binding, 'a SQL delivery target (postgres or mssql)');
  }
}

/**
 * The window census of a route's target (src/ports/window-census.ts), for the game day's
 * checks: PostgreSQL only so far; another kind is `gameday.census_unsupported`.
 */
export function openCensusFor(binding: Binding, settings: ConnectionSettings): WindowCensusPort {
  if (binding.kind !== 'postgres')
    throw new ConfigError(
      'gameday.census_unsupported',
      `binding ${binding.name}: the game day counts target rows on PostgreSQL targets only, not ${binding.kind}`,
    );
  return openPostgresCensus(postgresConnection(binding, settings));
}

/**
 * The credentials kept apart from the URL go INTO it (replacing any there): pg parses a
 * connectionString over its other settings, so a pool `user`/`password` beside a URL
 * without them would be overwritten with empty ones.
 */
function postgresConnection(binding: Binding, settings: ConnectionSettings): string {
  if (settings.username === undefined && settings.password === undefined) return settings.url;
  const url = URL.canParse(settings.url) ? new URL(settings.url) : undefined;
  if (!url || !/^postgres(ql)?:$/i.test(url.protocol) || url.host === '') {
    throw new ConfigError(
      'delivery.binding_url_invalid',
      `binding ${binding.name}: a PostgreSQL connection with a separate username or password must be a postgres:// URL`,
    );
  }
  if (settings.username !== undefined) url.username = encodeURIComponent(settings.username);
  if (settings.password !== undefined) url.password = encodeURIComponent(settings.password);
  return url.toString();
}

function mssqlConnection(binding: Binding, settings: ConnectionSettings): string {
  if (settings.username === undefined && settings.password === undefined) return settings.url;
  if (!/^(mssql|sqlserver):\/\//i.test(settings.url.trim())) {
    throw new ConfigError(
      'delivery.binding_credentials_conflict',
      `binding ${binding.name}: a SQL Server connection string cannot be combined with a separate username/password; put them in the string or use an mssql:// URL`,
    );
  }
  let url: URL;
  try {
    url = new URL(settings.url.trim());
  } catch {
    throw new ConfigError('delivery.mssql_connection_invalid', 'the SQL Server URL cannot be parsed');
  }
  // connection.ts decodes both parts with decodeURIComponent.
  if (settings.username !== undefined) url.username = encodeURIComponent(settings.username);
  if (settings.password !== undefined) url.password = encodeURIComponent(settings.password);
  return url.href;
}

function kindInvalid(binding: Binding, what: string): ConfigError {
  return new ConfigError(
    'delivery.binding_kind_invalid',
    `binding ${binding.name} of kind ${binding.kind} is not ${what}`,
  );
}
