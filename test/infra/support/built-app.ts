import { buildApp, type CutpointApp } from '../../../infra/app.js';

const built = new Map<string, CutpointApp>();

/** The CDK context of a deployment into an existing VPC whose endpoints the stack creates (two subnets, groups, route tables). */
export const VPC_CONTEXT = {
  'cutpoint:vpcId': 'vpc-0123456789abcdef0',
  'cutpoint:subnetIds': 'subnet-0123456789abcdef0,subnet-0123456789abcdef1',
  'cutpoint:securityGroupIds': 'sg-0123456789abcdef0,sg-0123456789abcdef1',
  'cutpoint:routeTableIds': 'rtb-0123456789abcdef0,rtb-0123456789abcdef1',
};

/**
 * The app as `cdk synth` builds it (templates only: no Lambda bundling) for one CDK context,
 * synthesized once per test worker and shared by every infra test file that asks for the
 * same context (the infra project runs with isolate: false): a synth of both stacks costs
 * seconds, and the files only read it. A test that must change an app builds its own.
 */
export function builtApp(context: Record<string, unknown> = {}): CutpointApp {
  const key = JSON.stringify(Object.entries(context).sort(([a], [b]) => a.localeCompare(b)));
  let app = built.get(key);
  if (!app) {
    // CDK's built-in CloudFormation validation is asserted once (cloudformation-validate.test.ts), not run on every synth.
    app = buildApp({ bundle: false, context, cloudFormationValidation: false });
    app.app.synth();
    built.set(key, app);
  }
  return app;
}
