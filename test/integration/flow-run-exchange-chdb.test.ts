import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertReaderReachable } from '../../src/cli/commands/delivery-bindings.js';
import { parseManifest, selectRoute } from '../../src/domain/delivery/manifest.js';
import { runCutpointInProcess } from '../support/cli-runtime.js';
import { publicationManifest } from '../support/publication-world.js';

/**
 * `cutpoint flow run publish-clickhouse` on this machine with the target binding on embedded
 * ClickHouse (`chdb:<dir>`): the flow would EXCHANGE the window into the target and then
 * ObserveTarget's bounded reader — a separate process — could never reach a directory this
 * process holds (the target stays TARGET_PENDING, custody retained, on every later
 * observation). Refused before anything runs (`quality.reader_unreachable`): no runtime
 * opened, no directory created, nothing written. The rule itself on each kind of route.
 */

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'cutpoint-exchange-chdb-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const manifestText = publicationManifest({ table: 'events' });
const route = () => selectRoute(parseManifest(manifestText, '/config/publish.yaml'), 'daily');

describe('an exchange route on a chdb: binding', () => {
  it('flow run publish-clickhouse is refused before anything starts: exit 1, quality.reader_unreachable, nothing created, no path printed', async () => {
    const dir = join(root, 'never-created');
    const input = JSON.stringify({ manifestText, selector: '/config/publish.yaml#daily' });
    // No local runtime under this state directory: reaching the runtime at all would fail differently.
    const r = await runCutpointInProcess(['flow', 'run', 'publish-clickhouse', '--input', input], {
      cwd: root,
      env: { CUTPOINT_STATE_DIR: join(root, 'no-runtime'), CH_URL: `chdb:${dir}`, CH_PUB_URL: `chdb:${dir}` },
    });
    expect(r).toMatchObject({ code: 1, stdout: '' });
    expect(r.stderr).toMatch(/^quality\.reader_unreachable: /m);
    expect(r.stderr).toContain('CH_PUB_URL');
    expect(r.stderr).toContain('http(s)://');
    expect(r.stderr).not.toContain(dir);
    expect(existsSync(dir)).toBe(false);
    expect(existsSync(join(root, 'no-runtime'))).toBe(false);
  });

  it('the rule: refused for chdb:, passed for an http(s) URL; a route whose target is not an exchange is not its concern', async () => {
    const env = (url: string) => ({ CH_URL: url, CH_PUB_URL: url });
    await expect(assertReaderReachable(route(), env('chdb:./data'))).rejects.toMatchObject({ name: 'Cutpoint.ConfigError', code: 'quality.reader_unreachable' });
    await expect(assertReaderReachable(route(), env('http://127.0.0.1:8123'))).resolves.toBeUndefined();
    const sql = manifestText
      .replace('pub_ch: { kind: clickhouse, url_env: CH_PUB_URL }', 'warehouse: { kind: postgres, url_env: PG_URL }')
      .replace(/target: \{ binding: pub_ch, table: pub\.events, key_columns: \[event_id\], mode: exchange \}/, 'target: { binding: warehouse, table: dwh.events, key_columns: [event_id], mode: replace_window }')
      .replace('      capsule: v2\n', '')
      .replace('{relation}', '{staging}');
    await expect(assertReaderReachable(selectRoute(parseManifest(sql, '/config/sql.yaml'), 'daily'), { ...env('chdb:./data'), PG_URL: 'postgres://x' })).resolves.toBeUndefined();
  });
});
