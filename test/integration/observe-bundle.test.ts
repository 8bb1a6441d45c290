import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROBE_WORKER_KEY } from '../../functions/quality/observe-step.js';
import { LAMBDA_BUNDLING } from '../../infra/bundling.js';
import { repoPath } from '../../infra/repo.js';
import { openClickHouse, type ClickHouseHandle } from '../../src/adapters/clickhouse/client.js';
import { runBoundedReader } from '../../src/adapters/reader-process/runner.js';
import { startClickHouseHost, type ClickHouseHost } from '../../src/local/clickhouse-host.js';
import { systemClock } from '../../src/ports/clock.js';
import type { ProbeWorkerInput } from '../../src/quality/probe-worker.js';

/**
 * The deployed side of the bounded reader (spec §4.4): NodejsFunction ships ONE file, so the
 * ObserveTarget Lambda forks its own bundle as the reader child. Here the observe handler
 * alone is bundled with the options infra/step-function.ts gives NodejsFunction
 * (infra/bundling.ts), and that bundle, re-run with the child switch, serves the probe
 * worker against a ClickHouse host over HTTP.
 */
const scratch = mkdtempSync(join(tmpdir(), 'cutpoint-observe-bundle-'));
const outfile = join(scratch, 'bundle', LAMBDA_BUNDLING.outfileName);
let host: ClickHouseHost;
let ch: ClickHouseHandle;

beforeAll(async () => {
  const bundled = build({
    entryPoints: [repoPath('functions/quality/observe-target.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    target: LAMBDA_BUNDLING.target,
    format: LAMBDA_BUNDLING.format,
    mainFields: [...LAMBDA_BUNDLING.mainFields],
    banner: { js: LAMBDA_BUNDLING.banner },
    minify: LAMBDA_BUNDLING.minify,
    // The source map (LAMBDA_BUNDLING.sourceMap) changes no code in the bundle; left out here to save its time.
    sourcemap: false,
    external: [...LAMBDA_BUNDLING.externalModules],
    logLevel: 'silent',
  });
  host = await startClickHouseHost({ dataDir: join(scratch, 'ch') });
  ch = await openClickHouse({ kind: 'http', url: host.url });
  await ch.client.command({ query: 'CREATE DATABASE pub' });
  await ch.client.command({ query: 'CREATE TABLE pub.events (id UInt64) ENGINE = MergeTree ORDER BY id' });
  await ch.client.command({ query: 'INSERT INTO pub.events VALUES (1), (2), (3)' });
  await bundled;
}, 60_000);

afterAll(async () => {
  await ch?.close();
  await host?.stop();
  rmSync(scratch, { recursive: true, force: true });
});

describe('the ObserveTarget bundle is its own bounded reader child', () => {
  it('forked with the child switch, the bundle serves the probe worker it bundled and returns the probe values and the generation', async () => {
    const input: ProbeWorkerInput = {
      url: host.url,
      relation: { database: 'pub', table: 'events' },
      probes: [{ name: 'row_count', sql: 'SELECT count() FROM pub.events' }],
      maxExecutionSeconds: 20,
    };
    const uuid = (await (await ch.client.query({ query: "SELECT toString(uuid) AS u FROM system.tables WHERE database = 'pub' AND name = 'events'", format: 'JSONEachRow' })).json<{ u: string }>())[0]!.u;
    const outcome = await runBoundedReader({ entry: PROBE_WORKER_KEY, childEntry: outfile, input, token: 'tok-bundle', deadlineAt: Date.now() + 30_000, clock: systemClock });
    expect(outcome).toMatchObject({ kind: 'RESULT', results: { before: uuid, after: uuid, values: { row_count: 3 } }, localTermination: 'VERIFIED' });
  });
});
