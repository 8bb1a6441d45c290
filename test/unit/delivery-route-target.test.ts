import { describe, expect, it } from 'vitest';
import { openRouteTargetFor } from '../../src/adapters/delivery-bindings.js';
import { FaultSwitch } from '../../src/adapters/fault-injector.js';
import { assertReaderReachable } from '../../src/cli/commands/delivery-bindings.js';
import { parseManifest, selectRoute } from '../../src/domain/delivery/manifest.js';
import type { Binding } from '../../src/domain/delivery/manifest-types.js';
import { publicationManifest } from '../support/publication-world.js';

// No I/O: an http(s) ClickHouse client and a postgres pool connect on their first query.
const ch: Binding = { name: 'pub_ch', kind: 'clickhouse', urlEnv: 'CH_PUB_URL' };
const pg: Binding = { name: 'warehouse', kind: 'postgres', urlEnv: 'PG_URL' };
const faults = new FaultSwitch();
const SECRET = 's3cr3t-never-printed';

describe('openRouteTargetFor: a route target of any kind', () => {
  it('a ClickHouse binding over http(s) opens the stage (TargetPort) and the EXCHANGE side together; one close', async () => {
    const opened = await openRouteTargetFor(
      ch,
      { url: 'https://ch.example.invalid:8443', username: 'svc', password: SECRET },
      faults,
    );
    expect(typeof opened.target.createStaging).toBe('function');
    expect(typeof opened.exchange?.exchange).toBe('function');
    expect(typeof opened.exchange?.observeTables).toBe('function');
    await opened.target.close();
  });

  it('a SQL binding opens its target only, no EXCHANGE side', async () => {
    const opened = await openRouteTargetFor(pg, { url: 'postgres://h.invalid:5432/db' }, faults);
    expect(opened.exchange).toBeUndefined();
    await opened.target.close();
  });

  it('embedded chdb:<dir> is for local runs only: refused without `embedded` (Lambda), never quoting the URL', async () => {
    const error = await openRouteTargetFor(ch, { url: `chdb:/tmp/${SECRET}` }, faults).then(
      () => ({ name: '', code: '', message: 'opened' }),
      (e: unknown) => e as { name: string; code: string; message: string },
    );
    expect(error).toMatchObject({ name: 'Cutpoint.ConfigError', code: 'delivery.binding_url_invalid' });
    expect(error.message).toContain('pub_ch');
    expect(error.message).not.toContain(SECRET);
    await expect(openRouteTargetFor(ch, { url: 'ftp://x' }, faults, { embedded: true })).rejects.toMatchObject({
      code: 'delivery.binding_url_invalid',
    });
  });

  it('embedded, a chdb:<dir> that does not exist is refused and never created', async () => {
    await expect(
      openRouteTargetFor(ch, { url: 'chdb:/nonexistent/cutpoint-route-target' }, faults, { embedded: true }),
    ).rejects.toMatchObject({ name: 'Cutpoint.ConfigError', code: 'delivery.source_data_dir_missing' });
  });
});

describe('assertReaderReachable: an exchange route is observed by a reader in a separate process', () => {
  const exchangeText = publicationManifest({ table: 'events' });
  const routeOf = (text: string) => selectRoute(parseManifest(text, '/config/publish.yaml'), 'daily');
  const env = (url: string) => ({ CH_URL: url, CH_PUB_URL: url, PG_URL: 'postgres://h.invalid/db' });

  it('refuses a target on embedded ClickHouse (quality.reader_unreachable), naming the variable, never its value; passes http(s)', async () => {
    const error = await assertReaderReachable(routeOf(exchangeText), env(`chdb:/tmp/${SECRET}`)).then(
      () => ({ name: '', code: '', message: 'passed' }),
      (e: unknown) => e as { name: string; code: string; message: string },
    );
    expect(error).toMatchObject({ name: 'Quality.ReaderUnreachable', code: 'quality.reader_unreachable' });
    expect(error.message).toContain('CH_PUB_URL');
    expect(error.message).not.toContain(SECRET);
    await expect(assertReaderReachable(routeOf(exchangeText), env('http://127.0.0.1:8123'))).resolves.toBeUndefined();
  });

  it('a route that is not an exchange is not its concern', async () => {
    const sqlText = exchangeText
      .replace('pub_ch: { kind: clickhouse, url_env: CH_PUB_URL }', 'warehouse: { kind: postgres, url_env: PG_URL }')
      .replace(
        /target: \{ binding: pub_ch, table: pub\.events, key_columns: \[event_id\], mode: exchange \}/,
        'target: { binding: warehouse, table: dwh.events, key_columns: [event_id], mode: replace_window }',
      )
      .replace('      capsule: v2\n', '')
      .replace('{relation}', '{staging}');
    expect(routeOf(sqlText).route.target.mode).toBe('replace_window');
    await expect(assertReaderReachable(routeOf(sqlText), env('chdb:./data'))).resolves.toBeUndefined();
  });
});
