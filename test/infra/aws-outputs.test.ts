import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { FLOWS } from '../../src/registry/index.js';
import { builtApp } from './support/built-app.js';
import { BUCKET_OUTPUT, DEFAULT_STACKS, outputOfFlow, TABLE_OUTPUT } from '../../src/cli/aws-settings.js';

/**
 * `--aws` finds the deployed system by the stacks' outputs: every name the CLI looks up
 * (src/cli/aws-settings.ts) must be an output of the stacks infra/app.ts deploys, under the
 * stack names the CLI defaults to.
 */
describe('stack outputs the CLI reads', () => {
  it('TableName, BucketName and <Flow>StateMachineArn of every flow, in CutpointStateful / CutpointWorkflows', () => {
    const built = builtApp();
    expect([built.stateful.stackName, built.workflows.stackName]).toEqual(DEFAULT_STACKS);
    const stateful = Object.keys(Template.fromStack(built.stateful).findOutputs('*'));
    const workflows = Object.keys(Template.fromStack(built.workflows).findOutputs('*'));
    expect(stateful).toEqual(expect.arrayContaining([TABLE_OUTPUT, BUCKET_OUTPUT]));
    expect(workflows).toEqual(expect.arrayContaining(FLOWS.map((f) => outputOfFlow(f.name))));
  }, 600_000);
});
