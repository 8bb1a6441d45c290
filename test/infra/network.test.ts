import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { STEPS } from '../../src/registry/index.js';
import type { CutpointApp } from '../../infra/app.js';
import { builtApp, VPC_CONTEXT } from './support/built-app.js';
import { interfaceServicesFor, reachesDatabases } from '../../infra/network.js';
import { actionsOf, resourcesOf, roleStatements } from './policies.js';
import { logicalId } from './support/logical-id.js';

// Three builds (templates only, no bundling): no VPC context, a VPC whose endpoints the
// stack creates, a VPC that already has them.
const { 'cutpoint:routeTableIds': _routeTables, ...VPC_EXISTING } = {
  ...VPC_CONTEXT,
  'cutpoint:vpcEndpoints': 'existing',
};

let plain: CutpointApp;
let created: CutpointApp;
let existing: CutpointApp;
const templates: Record<'plain' | 'created' | 'existing', Template> = {} as never;

beforeAll(() => {
  plain = builtApp();
  created = builtApp(VPC_CONTEXT);
  existing = builtApp(VPC_EXISTING);
  for (const [name, built] of [
    ['plain', plain],
    ['created', created],
    ['existing', existing],
  ] as const) {
    built.app.synth();
    templates[name] = Template.fromStack(built.workflows);
  }
}, 600_000);

function functionOf(built: CutpointApp, template: Template, placeholder: string) {
  const fn = built.workflows.functions.get(placeholder);
  if (!fn) throw new Error(`no function for ${placeholder}`);
  const resource = template.toJSON().Resources[logicalId(fn)] as {
    Properties: { VpcConfig?: unknown; Role: { 'Fn::GetAtt': [string, string] } };
  };
  return { vpcConfig: resource.Properties.VpcConfig, role: resource.Properties.Role['Fn::GetAtt'][0] };
}

const ENI_ACTIONS = [
  'ec2:AssignPrivateIpAddresses',
  'ec2:CreateNetworkInterface',
  'ec2:DeleteNetworkInterface',
  'ec2:DescribeNetworkInterfaces',
  'ec2:DescribeSubnets',
  'ec2:UnassignPrivateIpAddresses',
];

describe('private networking (cutpoint:vpcId …)', () => {
  it('the steps in the VPC are the registry steps that open a source or a target, every one of them', () => {
    const inVpc = STEPS.filter(reachesDatabases).map((s) => s.placeholder);
    // Every delivery, publication and quality step whose handler builds delivery deps, and nothing else.
    expect(inVpc.sort()).toEqual(
      STEPS.filter((s) => /^functions\/(delivery|publication|quality)\//.test(s.entry) && s.readsSecrets)
        .map((s) => s.placeholder)
        .sort(),
    );
    expect(inVpc).toContain('DeliveryExtractLoadPartFunctionArn');
    expect(inVpc).toContain('QualityObserveTargetFunctionArn');
    expect(inVpc).not.toContain('DeliveryInspectFunctionArn');
    expect(inVpc).not.toContain('DeliveryNotifyIncidentFunctionArn');
  });

  it.each(STEPS.map((s) => [s.placeholder, s] as const))(
    '%s: in the VPC exactly when it reaches a database, with the ENI actions then only',
    (placeholder, step) => {
      for (const [built, template] of [
        [created, templates.created],
        [existing, templates.existing],
      ] as const) {
        const { vpcConfig, role } = functionOf(built, template, placeholder);
        const eni = roleStatements(template, role).filter((s) => actionsOf(s).some((a) => a.startsWith('ec2:')));
        if (reachesDatabases(step)) {
          expect(vpcConfig).toEqual({
            SubnetIds: ['subnet-0123456789abcdef0', 'subnet-0123456789abcdef1'],
            SecurityGroupIds: ['sg-0123456789abcdef0', 'sg-0123456789abcdef1'],
          });
          expect(eni).toHaveLength(1);
          expect([...actionsOf(eni[0]!)].sort()).toEqual(ENI_ACTIONS);
          expect(resourcesOf(eni[0]!)).toEqual(['*']);
        } else {
          expect(vpcConfig).toBeUndefined();
          expect(eni).toEqual([]);
        }
      }
    },
  );

  it('creates gateway endpoints for S3 and DynamoDB on the route tables, and interface endpoints for Secrets Manager and X-Ray only', () => {
    const endpoints = Object.values(templates.created.findResources('AWS::EC2::VPCEndpoint')).map(
      (r) => r.Properties as Record<string, unknown>,
    );
    const service = (p: Record<string, unknown>) => JSON.stringify(p.ServiceName).replace(/.*\.(\w+)"\]\]\}$/, '$1');
    const gateways = endpoints.filter((p) => p.VpcEndpointType === 'Gateway');
    expect(gateways.map(service).sort()).toEqual(['dynamodb', 's3']);
    for (const gateway of gateways) {
      expect(gateway).toMatchObject({
        VpcId: VPC_CONTEXT['cutpoint:vpcId'],
        RouteTableIds: ['rtb-0123456789abcdef0', 'rtb-0123456789abcdef1'],
      });
    }
    const interfaces = endpoints.filter((p) => p.VpcEndpointType === 'Interface');
    // No step in the VPC publishes to SNS or starts executions (the registry says which).
    expect(interfaceServicesFor(STEPS)).toEqual(['secretsmanager', 'xray']);
    expect(interfaces.map(service).sort()).toEqual(['secretsmanager', 'xray']);
    for (const endpoint of interfaces) {
      expect(endpoint).toMatchObject({
        VpcId: VPC_CONTEXT['cutpoint:vpcId'],
        SubnetIds: ['subnet-0123456789abcdef0', 'subnet-0123456789abcdef1'],
        PrivateDnsEnabled: true,
      });
    }
    // The interface endpoints admit HTTPS from the functions' security groups, nothing else.
    const groups = Object.values(templates.created.findResources('AWS::EC2::SecurityGroup')).map(
      (r) => r.Properties as { SecurityGroupIngress: unknown[] },
    );
    expect(groups).toHaveLength(1);
    expect(groups[0]!.SecurityGroupIngress).toEqual([
      expect.objectContaining({
        IpProtocol: 'tcp',
        FromPort: 443,
        ToPort: 443,
        SourceSecurityGroupId: 'sg-0123456789abcdef0',
      }),
      expect.objectContaining({
        IpProtocol: 'tcp',
        FromPort: 443,
        ToPort: 443,
        SourceSecurityGroupId: 'sg-0123456789abcdef1',
      }),
    ]);
  });

  it('creates no endpoint and no security group with cutpoint:vpcEndpoints=existing', () => {
    expect(templates.existing.findResources('AWS::EC2::VPCEndpoint')).toEqual({});
    expect(templates.existing.findResources('AWS::EC2::SecurityGroup')).toEqual({});
  });

  it('without VPC context the template has no VPC, no endpoint and no ENI action', () => {
    const text = JSON.stringify(templates.plain.toJSON());
    expect(text).not.toContain('VpcConfig');
    expect(text).not.toContain('AWS::EC2::');
    expect(text).not.toContain('ec2:');
    // And the VPC context changes nothing but the network: the same resources besides it.
    const withoutNetwork = (t: Template) =>
      Object.entries(t.toJSON().Resources as Record<string, { Type: string }>)
        .filter(([id, r]) => !r.Type.startsWith('AWS::EC2::') && !id.startsWith('PrivateNetwork'))
        .map(([id, r]) => `${id} ${r.Type}`)
        .sort();
    expect(withoutNetwork(templates.created)).toEqual(withoutNetwork(templates.plain));
  });

  it('is cdk-nag clean with a VPC (the ENI wildcard acknowledged with its reason)', () => {
    for (const built of [created, existing]) {
      const report = new AwsSolutionsChecks(built.app, { verbose: true }).validateScope(built.app);
      expect(
        report.violations.flatMap((v) =>
          v.violatingResources.map((r) => `${v.ruleName} at ${r.constructPath ?? r.resourceLogicalId}`),
        ),
      ).toEqual([]);
    }
  });
});
