import { describe, expect, it } from 'vitest';
import {
  arnVariable,
  DEFAULT_STACKS,
  fromOutputs,
  mergeOutputs,
  outputOfFlow,
  pick,
  profileOf,
  regionOf,
  stacksOf,
} from '../../src/cli/aws-settings.js';
import { FLOWS } from '../../src/registry/index.js';
import { UsageError } from '../../src/cli/io.js';

/** The pure rules of `--aws`: stacks, outputs → names, precedence, region and profile. */
describe('--aws settings', () => {
  it('maps every flow to the CfnOutput key the workflows stack writes and to its override variable', () => {
    expect(outputOfFlow('deliver-window')).toBe('DeliverWindowStateMachineArn');
    expect(outputOfFlow('stream-resolve-append')).toBe('StreamResolveAppendStateMachineArn');
    expect(arnVariable('stream-resolve-append')).toBe('CUTPOINT_STREAM_RESOLVE_APPEND_ARN');
    expect(new Set(FLOWS.map((f) => outputOfFlow(f.name))).size).toBe(FLOWS.length);
  });

  it('--stack: the two deployed stacks by default, else comma-separated names; a bad or repeated name is a usage error', () => {
    expect(stacksOf(undefined)).toEqual(['CutpointStateful', 'CutpointWorkflows']);
    expect(DEFAULT_STACKS).toEqual(['CutpointStateful', 'CutpointWorkflows']);
    expect(stacksOf('ProdStateful, ProdWorkflows')).toEqual(['ProdStateful', 'ProdWorkflows']);
    expect(() => stacksOf('a_b')).toThrow(/--stack takes CloudFormation stack names/);
    expect(() => stacksOf('')).toThrow(/--stack takes/);
    expect(() => stacksOf('A,A')).toThrow(/names a stack twice/);
  });

  it('--stage: the two stacks infra/cutpoint-stage.ts names for that stage; a bad name, or with --stack, is a usage error', () => {
    expect(stacksOf(undefined, 'staging')).toEqual(['CutpointStateful-staging', 'CutpointWorkflows-staging']);
    expect(stacksOf(undefined, 'default')).toEqual([...DEFAULT_STACKS]);
    expect(() => stacksOf(undefined, 'Prod')).toThrow(UsageError);
    expect(() => stacksOf(undefined, 'prod-1')).toThrow(/--stage takes a stage name/);
    expect(() => stacksOf('CutpointStateful', 'staging')).toThrow(/--stack and --stage/);
  });

  it('precedence flag > env > stack outputs; a missing output is aws.output_missing naming the output and its override', () => {
    const env = { CUTPOINT_DELIVER_WINDOW_ARN: 'arn:env' };
    expect(pick('arn:flag', env, 'CUTPOINT_DELIVER_WINDOW_ARN')).toBe('arn:flag');
    expect(pick(undefined, env, 'CUTPOINT_DELIVER_WINDOW_ARN')).toBe('arn:env');
    expect(pick(undefined, { CUTPOINT_DELIVER_WINDOW_ARN: '  ' }, 'CUTPOINT_DELIVER_WINDOW_ARN')).toBeUndefined();
    const outputs = { TableName: 't-1', DeliverWindowStateMachineArn: 'arn:out' };
    expect(fromOutputs(outputs, 'DeliverWindowStateMachineArn', DEFAULT_STACKS, 'X')).toBe('arn:out');
    let error: unknown;
    try {
      fromOutputs(outputs, 'BucketName', DEFAULT_STACKS, 'CUTPOINT_BUCKET_NAME');
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({ name: 'Aws.OutputMissing', code: 'aws.output_missing' });
    expect((error as Error).message).toBe(
      'no stack output BucketName in CutpointStateful, CutpointWorkflows (redeploy the stacks, or set CUTPOINT_BUCKET_NAME)',
    );
  });

  it('merges the stacks outputs; one key with two values is aws.output_ambiguous, never last-wins', () => {
    expect(
      mergeOutputs([
        { name: 'A', outputs: { TableName: 't' } },
        { name: 'B', outputs: { X: 'x', TableName: 't' } },
      ]),
    ).toEqual({ TableName: 't', X: 'x' });
    expect(() =>
      mergeOutputs([
        { name: 'A', outputs: { TableName: 't' } },
        { name: 'B', outputs: { TableName: 'u' } },
      ]),
    ).toThrow(expect.objectContaining({ code: 'aws.output_ambiguous' }));
  });

  it('region: --region, then AWS_REGION, then AWS_DEFAULT_REGION, then the profile; none is aws.region_missing (no silent default)', async () => {
    let lookups = 0;
    const profile = () => (lookups++, Promise.resolve<string | undefined>('eu-west-3'));
    expect(await regionOf('ap-south-1', { AWS_REGION: 'us-west-2' }, profile, 'p')).toEqual({
      region: 'ap-south-1',
      from: '--region',
    });
    expect(
      (await regionOf(undefined, { AWS_REGION: 'us-west-2', AWS_DEFAULT_REGION: 'us-east-2' }, profile, 'p')).region,
    ).toBe('us-west-2');
    expect((await regionOf(undefined, { AWS_REGION: '', AWS_DEFAULT_REGION: 'us-east-2' }, profile, 'p')).region).toBe(
      'us-east-2',
    );
    // The profile is looked up only when no flag or variable names the region.
    expect(lookups).toBe(0);
    expect(await regionOf(undefined, {}, profile, 'p')).toEqual({ region: 'eu-west-3', from: 'profile p' });
    expect(lookups).toBe(1);
    await expect(regionOf(undefined, {}, () => Promise.resolve(undefined), 'ops')).rejects.toMatchObject({
      code: 'aws.region_missing',
      message: expect.stringContaining('profile ops'),
    });
  });

  it('profile: --profile, then AWS_PROFILE, then default (not named to the SDK)', () => {
    expect(profileOf('ops', { AWS_PROFILE: 'dev' })).toEqual({ name: 'ops', named: true });
    expect(profileOf(undefined, { AWS_PROFILE: 'dev' })).toEqual({ name: 'dev', named: true });
    expect(profileOf(undefined, {})).toEqual({ name: 'default', named: false });
  });
});
