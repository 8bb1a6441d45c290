import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { deliverySecretsOf, gcGraceOf, networkConfigOf } from './app-context.js';
import { maintenanceConfigOf } from './maintenance-schedule.js';
import { CutpointStatefulStack } from './stateful-stack.js';
import { CutpointWorkflowsStack } from './workflows-stack.js';

export interface CutpointApp {
  app: App;
  stateful: CutpointStatefulStack;
  workflows: CutpointWorkflowsStack;
}

/**
 * Builds the app without synthesizing it (infra/main.ts synthesizes; tests inspect).
 * Both stacks are environment-agnostic, so `cdk synth` needs no account or credentials.
 * cdk-nag 3's AwsSolutions pack runs as a CDK validation plugin (it is no longer an
 * Aspect): an unacknowledged error fails synthesis, and test/infra/nag.test.ts fails on
 * any unacknowledged error or warning. Acknowledgements sit next to the construct that
 * raises them (Validations.of(x).acknowledge), each with its reason.
 */
export function buildApp(
  options: { bundle?: boolean; context?: Record<string, unknown>; cloudFormationValidation?: boolean } = {},
): CutpointApp {
  const app = new App({
    // CDK's built-in CloudFormation validation (a WASM engine: ~2 of a synth's 3 s). On for
    // `cdk synth`; tests that only read templates turn it off, and one asserts it on its own
    // (test/infra/cloudformation-validate.test.ts).
    builtinCloudFormationValidation: options.cloudFormationValidation ?? true,
    context: {
      // No stack bundles its Lambda code when false (checks that read only the templates).
      ...(options.bundle === false ? { 'aws:cdk:bundling-stacks': [] } : {}),
      // Grant S3 server access log delivery by bucket policy, not the legacy ACL (ACLs
      // are disabled on our buckets by BucketOwnerEnforced).
      '@aws-cdk/aws-s3:serverAccessLogsUseBucketPolicy': true,
      // What `cdk -c key=value` would give (tests: cutpoint:maintenanceLanes).
      ...options.context,
    },
  });
  // Validated before any construct exists: a bad value fails synth with its infra.* code.
  const context = (key: string): unknown => app.node.tryGetContext(key);
  const network = networkConfigOf(context);
  const deliverySecrets = deliverySecretsOf(context);
  const gcGrace = gcGraceOf(context);
  const stateful = new CutpointStatefulStack(app, 'CutpointStateful', {
    description: 'cutpoint: authority table and object bucket (retained)',
  });
  const workflows = new CutpointWorkflowsStack(app, 'CutpointWorkflows', {
    description: 'cutpoint: step functions, state machines, the recovery dispatcher, alarms and dashboard',
    // One function, state machine (its ASL inline), alarm set and dashboard row per registry
    // entry: indented, the template passes 800 KB of CloudFormation's 1 MB (CDK's warning);
    // without indentation the same content is ~640 KB (test/infra/stacks.test.ts bounds it).
    suppressTemplateIndentation: true,
    stateful: stateful.refs,
    deliverySecrets,
    ...(network ? { network } : {}),
    ...(gcGrace ? { gcGrace } : {}),
    ...maintenanceOf(app),
  });
  // The workflows import the stateful stack's exports by name, which CDK cannot see.
  workflows.addStackDependency(stateful);
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
  return { app, stateful, workflows };
}

/** `cdk deploy -c cutpoint:maintenanceLanes=logs:0,logs:1 -c cutpoint:maintenanceRateMinutes=15`: the stream maintenance schedule (README). */
function maintenanceOf(app: App): { maintenance?: NonNullable<ReturnType<typeof maintenanceConfigOf>> } {
  const maintenance = maintenanceConfigOf(
    app.node.tryGetContext('cutpoint:maintenanceLanes'),
    app.node.tryGetContext('cutpoint:maintenanceRateMinutes'),
  );
  return maintenance ? { maintenance } : {};
}
