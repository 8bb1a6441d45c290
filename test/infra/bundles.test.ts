import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { App, Stack } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROBE_WORKER_KEY } from '../../functions/quality/observe-step.js';
import { STEPS, type StepEntry } from '../../src/registry/index.js';
import { repoPath } from '../../infra/repo.js';
import { LAMBDA_BUNDLING } from '../../infra/bundling.js';
import { StepFunction } from '../../infra/step-function.js';
import { openClickHouse } from '../../src/adapters/clickhouse/client.js';
import { runBoundedReader } from '../../src/adapters/reader-process/runner.js';
import { startClickHouseHost } from '../../src/local/clickhouse-host.js';
import { systemClock } from '../../src/engine/system-clock.js';
import type { ProbeWorkerInput } from '../../src/domain/quality/probes.js';
import { LOCAL_ENGINES } from '../../src/adapters/local-engines.js';

/**
 * The Lambda code, bundled for real, at the cost of about one bundle:
 * - every registry step in ONE esbuild run with the stack's options (infra/bundling.ts), code
 *   splitting on — each entry's whole module graph bundles as node24 ESM, loads in plain
 *   Node and raises named domain errors (one run with shared chunks takes the time of one
 *   unsplit bundle; 36 unsplit bundles took ten times as long);
 * - one step through the stack's own construct (StepFunction → NodejsFunction → the esbuild
 *   command line aws-lambda-nodejs builds): the deployed shape — one minified ESM file with
 *   the require shim first, `handler` exported, a sourcemap beside it. The step is
 *   ObserveTarget, whose Lambda forks its own bundle as the bounded reader child
 * (docs/rules.md#bounded-reader):
 *   that file, forked with the child switch, serves the probe worker against a ClickHouse
 *   host over HTTP.
 * `cdk synth` in CI builds every function's deployed bundle.
 */

const SMOKE_ENV = {
  PATH: process.env.PATH,
  CUTPOINT_TABLE_NAME: 'cutpoint-test',
  CUTPOINT_BUCKET_NAME: 'cutpoint-test',
  CUTPOINT_INCIDENT_TOPIC_ARN: 'arn:aws:sns:eu-west-1:111111111111:cutpoint-test',
  AWS_REGION: 'eu-west-1',
  AWS_LAMBDA_FUNCTION_NAME: 'bundle-smoke',
};

/**
 * What each handler raises on `{}` in plain Node: a refusal by name. A flow's first Task (a
 * live recovery step and the operator's observe among them) refuses first that the Task
 * passes no flow and execution input (flow.first_task_invalid, docs/deploy.md "Flow inputs").
 */
const expectedName = (_step: StepEntry) => 'Cutpoint.ValidationError';

/** Imports each bundle outside vitest's module graph, as the Lambda runtime would, and calls its handler with `{}`. */
function errorNamesOf(files: string[]): string[] {
  const script = `for (const url of ${JSON.stringify(files.map((f) => pathToFileURL(f).href))}) {
    const { handler } = await import(url);
    try { await handler({}, {}); console.log('resolved'); } catch (error) { console.log(error.name); }
  }`;
  // The handlers' own JSON log lines and EMF metrics (Lambda mode: AWS_LAMBDA_FUNCTION_NAME) share stdout.
  return execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: tmpdir(),
    env: SMOKE_ENV,
    encoding: 'utf8',
  })
    .trim()
    .split('\n')
    .filter((line) => !line.startsWith('{'));
}

let split: string;
/** Every file the step bundles were built from. */
let bundledInputs: string[] = [];
let assembly: string;
/** The deployed-shape ObserveTarget bundle (set by the construct test). */
let observeBundle = '';

beforeAll(async () => {
  split = mkdtempSync(join(tmpdir(), 'cutpoint-bundles-'));
  assembly = mkdtempSync(join(tmpdir(), 'cutpoint-bundle-one-'));
  const result = await build({
    metafile: true,
    entryPoints: Object.fromEntries(STEPS.map((s) => [s.placeholder, repoPath(s.entry)])),
    outdir: split,
    outExtension: { '.js': '.mjs' },
    splitting: true,
    bundle: true,
    platform: 'node',
    target: LAMBDA_BUNDLING.target,
    format: LAMBDA_BUNDLING.format,
    minify: LAMBDA_BUNDLING.minify,
    sourcemap: LAMBDA_BUNDLING.sourceMap,
    sourcesContent: LAMBDA_BUNDLING.sourcesContent,
    external: [...LAMBDA_BUNDLING.externalModules],
    banner: { js: LAMBDA_BUNDLING.banner },
    mainFields: [...LAMBDA_BUNDLING.mainFields],
    logLevel: 'error',
  });
  bundledInputs = Object.keys(result.metafile.inputs);
}, 300_000);

afterAll(() => {
  for (const dir of [split, assembly]) if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('Lambda bundles', () => {
  it('every registry step bundles as node24 ESM without the local runtime (chdb, the emulators), loads in plain Node and its handler raises named domain errors', () => {
    const entries = STEPS.map((s) => join(split, `${s.placeholder}.mjs`));
    for (const entry of entries) expect(readFileSync(entry, 'utf8')).not.toMatch(/from\s*["']chdb["']/);
    // No engine of the local runtime (packages/local) is bundled into a Lambda.
    const engines = Object.keys(LOCAL_ENGINES);
    expect(bundledInputs.length).toBeGreaterThan(STEPS.length);
    expect(bundledInputs.filter((f) => engines.some((name) => f.includes(`node_modules/${name}/`)))).toEqual([]);
    expect(errorNamesOf(entries)).toEqual(STEPS.map(expectedName));
  });

  it("one step through the stack's own construct: one minified ESM file, the require shim first, handler exported, sourcemap beside it", () => {
    const step = STEPS.find((s) => s.placeholder === 'QualityObserveTargetFunctionArn')!;
    const app = new App({ outdir: assembly });
    const stack = new Stack(app, 'BundleOne');
    const arn = (service: string, resource: string) => `arn:aws:${service}:eu-west-1:111111111111:${resource}`;
    const data = {
      tableArn: arn('dynamodb', 'table/cutpoint-test'),
      bucketArn: 'arn:aws:s3:::cutpoint-test',
      incidentTopicArn: arn('sns', 'cutpoint-test'),
      incidentKeyArn: arn('kms', 'key/test'),
      deliverySecrets: {
        source: [arn('secretsmanager', 'secret:cutpoint/delivery/source/*')],
        target: [arn('secretsmanager', 'secret:cutpoint/delivery/target/*')],
      },
      tableName: 'cutpoint-test',
      bucketName: 'cutpoint-test',
    };
    new StepFunction(stack, 'Step', { step, data, logRetention: RetentionDays.ONE_WEEK });
    app.synth();
    const template = JSON.parse(readFileSync(join(assembly, 'BundleOne.template.json'), 'utf8')) as {
      Resources: Record<string, { Type: string; Properties: { Code: { S3Key: string } } }>;
    };
    const fn = Object.values(template.Resources).find((r) => r.Type === 'AWS::Lambda::Function')!;
    const bundle = join(assembly, `asset.${fn.Properties.Code.S3Key.replace(/\.zip$/, '')}`, 'index.mjs');
    expect(existsSync(`${bundle}.map`)).toBe(true);
    const code = readFileSync(bundle, 'utf8');
    expect(code.startsWith("import { createRequire } from 'module';")).toBe(true);
    expect(code).toMatch(/export\s*\{[^}]*\bas handler\b[^}]*\}/);
    expect(code.length / code.split('\n').length).toBeGreaterThan(1_000); // minified: newlines only inside literals
    expect(errorNamesOf([bundle])).toEqual([expectedName(step)]);
    observeBundle = bundle;
  }, 120_000);

  it('every observing bundle is its own bounded reader child (ObserveTarget deployed-shape; delivery-resume and quality-observe from the split build): forked with the child switch, it serves the probe worker and returns the values and the generation', async () => {
    expect(observeBundle, 'the deployed-shape bundle above').not.toBe('');
    const host = await startClickHouseHost({ dataDir: join(assembly, 'ch') });
    const ch = await openClickHouse({ kind: 'http', url: host.url });
    try {
      await ch.client.command({ query: 'CREATE DATABASE pub' });
      await ch.client.command({ query: 'CREATE TABLE pub.events (id UInt64) ENGINE = MergeTree ORDER BY id' });
      await ch.client.command({ query: 'INSERT INTO pub.events VALUES (1), (2), (3)' });
      const input: ProbeWorkerInput = {
        url: host.url,
        relation: { database: 'pub', table: 'events' },
        probes: [{ name: 'row_count', sql: 'SELECT count() FROM pub.events' }],
        maxExecutionSeconds: 20,
      };
      const uuid = (
        await (
          await ch.client.query({
            query: "SELECT toString(uuid) AS u FROM system.tables WHERE database = 'pub' AND name = 'events'",
            format: 'JSONEachRow',
          })
        ).json<{ u: string }>()
      )[0]!.u;
      for (const childEntry of [
        observeBundle,
        join(split, 'DeliveryRecoverResumeFunctionArn.mjs'),
        join(split, 'QualityOperatorObserveFunctionArn.mjs'),
      ]) {
        const outcome = await runBoundedReader({
          entry: PROBE_WORKER_KEY,
          childEntry,
          input,
          token: 'tok-bundle',
          deadlineAt: Date.now() + 30_000,
          clock: systemClock,
        });
        expect(outcome, childEntry).toMatchObject({
          kind: 'RESULT',
          results: { before: uuid, after: uuid, values: { row_count: 3 } },
          localTermination: 'VERIFIED',
        });
      }
    } finally {
      await ch.close();
      await host.stop();
    }
  }, 60_000);
});
