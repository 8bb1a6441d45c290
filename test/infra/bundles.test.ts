import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { App, Stack } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STEPS, type StepEntry } from '../../functions/registry.js';
import { repoPath } from '../../infra/repo.js';
import { STEP_BUNDLING, StepFunction } from '../../infra/step-function.js';

/**
 * The Lambda code, bundled for real, at the cost of about one bundle:
 * - every registry step in ONE esbuild run with STEP_BUNDLING's options (the stack's), code
 *   splitting on — each entry's whole module graph bundles as node24 ESM, loads in plain
 *   Node and raises named domain errors (one run with shared chunks takes the time of one
 *   unsplit bundle; 36 unsplit bundles took ten times as long);
 * - one step through the stack's own construct (StepFunction → NodejsFunction → the esbuild
 *   command line aws-lambda-nodejs builds): the deployed shape — one minified ESM file with
 *   the require shim first, `handler` exported, a sourcemap beside it.
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

/** What each handler raises on `{}` in plain Node: a live recovery step refuses a missing confirmation first. */
const expectedName = (step: StepEntry) => (/^Delivery(Reconcile|Resume|Retire)FunctionArn$/.test(step.placeholder) ? 'Delivery.ConfirmationRequired' : 'Cutpoint.ValidationError');

/** Imports each bundle outside vitest's module graph, as the Lambda runtime would, and calls its handler with `{}`. */
function errorNamesOf(files: string[]): string[] {
  const script = `for (const url of ${JSON.stringify(files.map((f) => pathToFileURL(f).href))}) {
    const { handler } = await import(url);
    try { await handler({}, {}); console.log('resolved'); } catch (error) { console.log(error.name); }
  }`;
  return execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: tmpdir(), env: SMOKE_ENV, encoding: 'utf8' }).trim().split('\n');
}

let split: string;
let assembly: string;

beforeAll(async () => {
  split = mkdtempSync(join(tmpdir(), 'cutpoint-bundles-'));
  assembly = mkdtempSync(join(tmpdir(), 'cutpoint-bundle-one-'));
  await build({
    entryPoints: Object.fromEntries(STEPS.map((s) => [s.placeholder, repoPath(s.entry)])),
    outdir: split,
    outExtension: { '.js': '.mjs' },
    splitting: true,
    bundle: true,
    platform: 'node',
    target: 'node24',
    format: STEP_BUNDLING.format,
    minify: STEP_BUNDLING.minify,
    sourcemap: STEP_BUNDLING.sourceMap,
    external: [...STEP_BUNDLING.externalModules],
    banner: { js: STEP_BUNDLING.banner },
    mainFields: [...STEP_BUNDLING.mainFields],
    logLevel: 'error',
  });
}, 300_000);

afterAll(() => {
  for (const dir of [split, assembly]) if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('Lambda bundles', () => {
  it('every registry step bundles as node24 ESM without chdb, loads in plain Node and its handler raises named domain errors', () => {
    const entries = STEPS.map((s) => join(split, `${s.placeholder}.mjs`));
    for (const entry of entries) expect(readFileSync(entry, 'utf8')).not.toMatch(/from\s*["']chdb["']/);
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
      deliverySecretArns: [arn('secretsmanager', 'secret:cutpoint/delivery/*')],
      tableName: 'cutpoint-test',
      bucketName: 'cutpoint-test',
    };
    new StepFunction(stack, 'Step', { step, data, logRetention: RetentionDays.ONE_WEEK });
    app.synth();
    const template = JSON.parse(readFileSync(join(assembly, 'BundleOne.template.json'), 'utf8')) as { Resources: Record<string, { Type: string; Properties: { Code: { S3Key: string } } }> };
    const fn = Object.values(template.Resources).find((r) => r.Type === 'AWS::Lambda::Function')!;
    const bundle = join(assembly, `asset.${fn.Properties.Code.S3Key.replace(/\.zip$/, '')}`, 'index.mjs');
    expect(existsSync(`${bundle}.map`)).toBe(true);
    const code = readFileSync(bundle, 'utf8');
    expect(code.startsWith("import { createRequire } from 'module';")).toBe(true);
    expect(code).toMatch(/export\s*\{[^}]*\bas handler\b[^}]*\}/);
    expect(code.length / code.split('\n').length).toBeGreaterThan(1_000); // minified: newlines only inside literals
    expect(errorNamesOf([bundle])).toEqual([expectedName(step)]);
  }, 120_000);
});
