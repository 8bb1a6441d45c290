import { readFileSync } from 'node:fs';
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { CutpointStage } from './cutpoint-stage.js';
import { repoPath } from './repo.js';
import { readStageConfig, stagesOf, type StageConfigFile } from './stage-config.js';
import type { CutpointStatefulStack } from './stateful-stack.js';
import type { CutpointWorkflowsStack } from './workflows-stack.js';

export interface CutpointApp {
  app: App;
  /** Every stage of the settings file (or the one `-c cutpoint:stage` names), in file order. */
  stages: CutpointStage[];
  /** The first stage's stacks (the only stage, unless the file names several). */
  stateful: CutpointStatefulStack;
  workflows: CutpointWorkflowsStack;
}

/**
 * Builds the app without synthesizing it (infra/main.ts synthesizes; tests inspect): one
 * CutpointStage (infra/cutpoint-stage.ts) per stage of the committed settings file
 * (cutpoint.config.json, infra/stage-config.ts). The stacks are environment-agnostic, so
 * `cdk synth` needs no account or credentials. cdk-nag 3's AwsSolutions pack runs as a CDK
 * validation plugin (it is no longer an Aspect): an unacknowledged error fails synthesis,
 * and test/infra/nag.test.ts fails on any unacknowledged error or warning.
 * Acknowledgements sit next to the construct that raises them (Validations.of(x).acknowledge),
 * each with its reason.
 */
export function buildApp(
  options: {
    bundle?: boolean;
    context?: Record<string, unknown>;
    /** The settings (tests); absent: cutpoint.config.json, or the file `-c cutpoint:config` names. */
    config?: StageConfigFile;
    cloudFormationValidation?: boolean;
  } = {},
): CutpointApp {
  const app = new App({
    // CDK's built-in CloudFormation validation (a WASM engine: ~2 of a synth's 3 s). On for
    // `cdk synth`; tests that only read templates turn it off, and one asserts it on its own
    // (test/infra/cloudformation-validate.test.ts).
    builtinCloudFormationValidation: options.cloudFormationValidation ?? true,
    context: {
      // cdk.json's context (the pinned feature flags) also when the app is built without the
      // CDK CLI (tests), so they synthesize what `cdk synth` does; the CLI's context wins.
      ...cdkJsonContext(),
      // No stack bundles its Lambda code when false (checks that read only the templates).
      ...(options.bundle === false ? { 'aws:cdk:bundling-stacks': [] } : {}),
      // What `cdk -c key=value` would give (tests: cutpoint:maintenanceLanes).
      ...options.context,
    },
  });
  // Validated before any construct exists: a bad value fails synth with its infra.* code.
  const context = (key: string): unknown => app.node.tryGetContext(key);
  const file = context('cutpoint:config');
  const config = options.config ?? readStageConfig(file === undefined ? undefined : String(file));
  const stages = stagesOf(config, context).map(
    (props) => new CutpointStage(app, props.stage === 'default' ? 'Cutpoint' : `Cutpoint-${props.stage}`, props),
  );
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
  const [first] = stages;
  if (!first) throw new Error('no stage');
  return { app, stages, stateful: first.stateful, workflows: first.workflows };
}

/** The `context` of cdk.json (feature flags and settings the CDK CLI passes to `cdk synth`). */
export function cdkJsonContext(): Record<string, unknown> {
  const json = JSON.parse(readFileSync(repoPath('cdk.json'), 'utf8')) as { context?: Record<string, unknown> };
  return json.context ?? {};
}
