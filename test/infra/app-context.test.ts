import { describe, expect, it } from 'vitest';
import { deliverySecretsOf, gcGraceOf, networkConfigOf } from '../../infra/app-context.js';
import { ConfigError } from '../../src/domain/errors.js';

// The CDK context values are validated before any construct exists (pure: no synth here).
const of = (values: Record<string, unknown>) => (key: string) => values[key];
const VPC = {
  'cutpoint:vpcId': 'vpc-0123456789abcdef0',
  'cutpoint:subnetIds': 'subnet-0123456789abcdef0, subnet-0123456789abcdef1',
  'cutpoint:securityGroupIds': 'sg-0123456789abcdef0',
  'cutpoint:routeTableIds': 'rtb-0123456789abcdef0',
};

function codeOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).code;
  }
  throw new Error('expected a ConfigError');
}

describe('networkConfigOf (cutpoint:vpcId, subnetIds, securityGroupIds, vpcEndpoints, routeTableIds)', () => {
  it('is absent without any VPC key', () => {
    expect(networkConfigOf(of({}))).toBeUndefined();
  });

  it('reads a VPC whose endpoints the stack creates (the default), trimming list items', () => {
    expect(networkConfigOf(of(VPC))).toEqual({
      vpcId: 'vpc-0123456789abcdef0',
      subnetIds: ['subnet-0123456789abcdef0', 'subnet-0123456789abcdef1'],
      securityGroupIds: ['sg-0123456789abcdef0'],
      endpoints: 'create',
      routeTableIds: ['rtb-0123456789abcdef0'],
    });
  });

  it('accepts JSON arrays (cdk.json) and existing endpoints without route tables', () => {
    const { 'cutpoint:routeTableIds': _omitted, ...rest } = VPC;
    expect(
      networkConfigOf(of({ ...rest, 'cutpoint:subnetIds': ['subnet-01234567'], 'cutpoint:vpcEndpoints': 'existing' })),
    ).toEqual({
      vpcId: 'vpc-0123456789abcdef0',
      subnetIds: ['subnet-01234567'],
      securityGroupIds: ['sg-0123456789abcdef0'],
      endpoints: 'existing',
      routeTableIds: [],
    });
  });

  it.each([
    ['a VPC id alone', { 'cutpoint:vpcId': VPC['cutpoint:vpcId'] }, 'infra.vpc_context_incomplete'],
    [
      'subnets without security groups',
      { ...VPC, 'cutpoint:securityGroupIds': undefined },
      'infra.vpc_context_incomplete',
    ],
    ['vpcEndpoints without a VPC', { 'cutpoint:vpcEndpoints': 'existing' }, 'infra.vpc_context_incomplete'],
    [
      'routeTableIds with existing endpoints',
      { ...VPC, 'cutpoint:vpcEndpoints': 'existing' },
      'infra.vpc_context_incomplete',
    ],
    ['a malformed VPC id', { ...VPC, 'cutpoint:vpcId': 'vpc-xyz' }, 'infra.vpc_id_invalid'],
    [
      'a security group where a subnet belongs',
      { ...VPC, 'cutpoint:subnetIds': 'sg-0123456789abcdef0' },
      'infra.subnet_ids_invalid',
    ],
    ['an empty subnet list', { ...VPC, 'cutpoint:subnetIds': '' }, 'infra.subnet_ids_invalid'],
    [
      'a repeated subnet',
      { ...VPC, 'cutpoint:subnetIds': 'subnet-01234567,subnet-01234567' },
      'infra.subnet_ids_invalid',
    ],
    [
      'a malformed security group',
      { ...VPC, 'cutpoint:securityGroupIds': 'default' },
      'infra.security_group_ids_invalid',
    ],
    ['an unknown endpoints mode', { ...VPC, 'cutpoint:vpcEndpoints': 'none' }, 'infra.vpc_endpoints_invalid'],
    [
      'created endpoints without route tables',
      { ...VPC, 'cutpoint:routeTableIds': undefined },
      'infra.route_table_ids_missing',
    ],
    ['a malformed route table', { ...VPC, 'cutpoint:routeTableIds': 'rtb-1' }, 'infra.route_table_ids_invalid'],
  ])('refuses %s with a precise code', (_case, values, code) => {
    expect(codeOf(() => networkConfigOf(of(values)))).toBe(code);
  });
});

describe('deliverySecretsOf (cutpoint:deliverySourceSecretArns, deliveryTargetSecretArns, deliverySecretArns)', () => {
  const source = 'arn:aws:secretsmanager:eu-west-1:111111111111:secret:warehouse/source/*';
  const target = 'arn:aws:secretsmanager:eu-west-1:111111111111:secret:warehouse/target-AbCdEf';

  it('keeps both defaults without context', () => {
    expect(deliverySecretsOf(of({}))).toEqual({});
  });

  it('overrides each side on its own', () => {
    expect(deliverySecretsOf(of({ 'cutpoint:deliverySourceSecretArns': source }))).toEqual({ source: [source] });
    expect(deliverySecretsOf(of({ 'cutpoint:deliveryTargetSecretArns': `${target}, ${source}` }))).toEqual({
      target: [target, source],
    });
  });

  it('keeps the earlier cutpoint:deliverySecretArns with its earlier meaning: sources and targets alike', () => {
    expect(deliverySecretsOf(of({ 'cutpoint:deliverySecretArns': target }))).toEqual({
      source: [target],
      target: [target],
    });
  });

  it('refuses the earlier key combined with a new one, and values that are not secret ARNs', () => {
    expect(
      codeOf(() =>
        deliverySecretsOf(of({ 'cutpoint:deliverySecretArns': target, 'cutpoint:deliveryTargetSecretArns': target })),
      ),
    ).toBe('infra.delivery_secret_context_conflict');
    expect(codeOf(() => deliverySecretsOf(of({ 'cutpoint:deliveryTargetSecretArns': 'arn:aws:s3:::bucket' })))).toBe(
      'infra.delivery_secret_arns_invalid',
    );
    expect(codeOf(() => deliverySecretsOf(of({ 'cutpoint:deliverySourceSecretArns': ' , ' })))).toBe(
      'infra.delivery_secret_arns_invalid',
    );
  });
});

describe('gcGraceOf (cutpoint:gcGrace)', () => {
  it('takes a GC duration as the stream-gc steps read it; unset is none; anything else is infra.gc_grace_invalid', () => {
    expect(gcGraceOf(of({}))).toBeUndefined();
    expect(gcGraceOf(of({ 'cutpoint:gcGrace': '6h' }))).toBe('6h');
    expect(gcGraceOf(of({ 'cutpoint:gcGrace': ' 90m ' }))).toBe('90m');
    for (const bad of ['6 hours', '-1h', '1y', ''])
      expect(
        codeOf(() => gcGraceOf(of({ 'cutpoint:gcGrace': bad }))),
        bad,
      ).toBe('infra.gc_grace_invalid');
  });
});
