import { type BundlingOptions, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';

/**
 * How every step Lambda is bundled (infra/step-function.ts hands these to NodejsFunction,
 * which runs esbuild locally), as plain values so a test can run the same esbuild build
 * without CDK: test/infra/bundles.test.ts bundles every handler with them
 * this way and forks the bundle as its own bounded reader child.
 */
export const LAMBDA_BUNDLING = {
  /** esbuild's target for the Lambda runtime (NODEJS_24_X). */
  target: 'node24',
  format: 'esm',
  /** The bundle file NodejsFunction writes for ESM output. */
  outfileName: 'index.mjs',
  mainFields: ['module', 'main'],
  /** ESM output still meets CommonJS dependencies that call require() for Node builtins. */
  banner: "import { createRequire } from 'module'; const require = createRequire(import.meta.url);",
  minify: true,
  sourceMap: true,
  // Maps without the sources embedded: stack traces still name file, line and column
  // (NODE_OPTIONS=--enable-source-maps), and the upload shrinks by about four fifths
  // (the embedded sources were ~9 MiB beside each database-opening bundle).
  sourcesContent: false,
  // Embedded ClickHouse is for local runs only (linux-x64, 566 MB engine); Lambdas
  // reach ClickHouse over HTTP, so chdb never enters a bundle.
  externalModules: ['chdb'],
} as const;

/**
 * The NodejsFunction bundling of every cutpoint Lambda (the steps and the recovery
 * dispatcher), from LAMBDA_BUNDLING: esbuild locally (no Docker), and the pinned SDK
 * bundled — the adapters are tested with it (retries off for writes, outcome
 * classification by error shape) rather than whatever the runtime ships.
 */
export function lambdaBundling(): BundlingOptions {
  return {
    forceDockerBundling: false,
    target: LAMBDA_BUNDLING.target,
    format: OutputFormat.ESM,
    mainFields: [...LAMBDA_BUNDLING.mainFields],
    banner: LAMBDA_BUNDLING.banner,
    minify: LAMBDA_BUNDLING.minify,
    sourceMap: LAMBDA_BUNDLING.sourceMap,
    sourcesContent: LAMBDA_BUNDLING.sourcesContent,
    bundleAwsSDK: true,
    // chdb never enters a bundle (above).
    externalModules: [...LAMBDA_BUNDLING.externalModules],
  };
}
