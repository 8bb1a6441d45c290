import { Annotations, Aws, Fn } from 'aws-cdk-lib';
import {
  CfnVPCEndpoint,
  Peer,
  Port,
  SecurityGroup,
  Subnet,
  Vpc,
  type ISecurityGroup,
  type ISubnet,
  type IVpc,
} from 'aws-cdk-lib/aws-ec2';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import type { StepEntry } from '../src/registry/index.js';
import type { NetworkConfig } from './app-context.js';

/** What a function needs to run in the VPC. */
export interface VpcAttachment {
  vpc: IVpc;
  subnets: ISubnet[];
  securityGroups: ISecurityGroup[];
}

/**
 * The AWS services the database-reaching steps call, besides their databases: the
 * authority table and the object bucket (gateway endpoints), their connection secrets,
 * and X-Ray (every function traces: tracing ACTIVE). SNS only if such a step notifies and
 * Step Functions only if one starts executions: none does today (src/registry/:
 * the incident publisher opens no database and runs outside the VPC), so neither gets an
 * endpoint; `interfaceServicesFor` derives the list from the registry, so adding one adds it.
 */
export const GATEWAY_SERVICES = ['s3', 'dynamodb'] as const;

export function interfaceServicesFor(steps: readonly StepEntry[]): string[] {
  const inVpc = steps.filter(reachesDatabases);
  return [...(inVpc.length > 0 ? ['secretsmanager', 'xray'] : []), ...(inVpc.some((s) => s.notifies) ? ['sns'] : [])];
}

/** A step that opens the route's source or target: it runs in the VPC when one is configured. */
export function reachesDatabases(step: Pick<StepEntry, 'readsSecrets'>): boolean {
  return step.readsSecrets !== undefined;
}

/**
 * The ENI actions AWSLambdaVPCAccessExecutionRole grants, as an explicit statement on each
 * VPC function's role (the roles carry no AWS-managed policy). They accept no resource-level
 * permissions: "*" only.
 */
export function vpcAccessStatement(): PolicyStatement {
  return new PolicyStatement({
    sid: 'VpcNetworkInterfaces',
    actions: [
      'ec2:CreateNetworkInterface',
      'ec2:DescribeNetworkInterfaces',
      'ec2:DescribeSubnets',
      'ec2:DeleteNetworkInterface',
      'ec2:AssignPrivateIpAddresses',
      'ec2:UnassignPrivateIpAddresses',
    ],
    resources: ['*'],
  });
}

/**
 * The imported VPC (by id: no lookup, the stack stays environment-agnostic), its subnets
 * and security groups, and — unless `endpoints: existing` — the VPC endpoints the steps
 * need without a NAT: gateway endpoints for S3 and DynamoDB on the given route tables,
 * interface endpoints (private DNS) in the given subnets behind a security group that
 * admits HTTPS from the functions' security groups only.
 */
export class PrivateNetwork extends Construct {
  readonly attachment: VpcAttachment;

  constructor(scope: Construct, id: string, props: { config: NetworkConfig; interfaceServices: readonly string[] }) {
    super(scope, id);
    const { config } = props;
    // availabilityZones: none known (environment-agnostic); the functions name their subnets explicitly.
    const vpc = Vpc.fromVpcAttributes(this, 'Vpc', { vpcId: config.vpcId, availabilityZones: Fn.getAzs() });
    Annotations.of(vpc).acknowledgeWarning(
      '@aws-cdk/aws-ec2:vpcAttributeIsListTokenavailabilityZones',
      'The functions name their subnets explicitly; nothing here needs the VPC subnets by zone at synthesis.',
    );
    const subnets = config.subnetIds.map((subnetId, i) => {
      const subnet = Subnet.fromSubnetId(this, `Subnet${i}`, subnetId);
      Annotations.of(subnet).acknowledgeWarning(
        '@aws-cdk/aws-ec2:noSubnetRouteTableId',
        "Nothing reads a subnet's route table: the gateway endpoints take cutpoint:routeTableIds.",
      );
      return subnet;
    });
    const securityGroups = config.securityGroupIds.map((sg, i) =>
      SecurityGroup.fromSecurityGroupId(this, `SecurityGroup${i}`, sg, { mutable: false }),
    );
    this.attachment = { vpc, subnets, securityGroups };
    if (config.endpoints === 'existing') return;

    for (const service of GATEWAY_SERVICES) {
      new CfnVPCEndpoint(this, `${pascal(service)}Gateway`, {
        vpcId: config.vpcId,
        serviceName: serviceName(service),
        vpcEndpointType: 'Gateway',
        routeTableIds: [...config.routeTableIds],
      });
    }
    if (props.interfaceServices.length === 0) return;
    const endpointGroup = new SecurityGroup(this, 'EndpointSecurityGroup', {
      vpc,
      description: 'cutpoint interface endpoints: HTTPS from the cutpoint database steps only',
      allowAllOutbound: false,
    });
    for (const [i, sg] of config.securityGroupIds.entries()) {
      endpointGroup.addIngressRule(
        Peer.securityGroupId(sg),
        Port.tcp(443),
        `HTTPS from cutpoint step security group ${i}`,
      );
    }
    for (const service of props.interfaceServices) {
      new CfnVPCEndpoint(this, `${pascal(service)}Interface`, {
        vpcId: config.vpcId,
        serviceName: serviceName(service),
        vpcEndpointType: 'Interface',
        subnetIds: [...config.subnetIds],
        securityGroupIds: [endpointGroup.securityGroupId],
        privateDnsEnabled: true,
      });
    }
  }
}

function serviceName(service: string): string {
  return Fn.join('', ['com.amazonaws.', Aws.REGION, `.${service}`]);
}

function pascal(service: string): string {
  return service === 'secretsmanager'
    ? 'SecretsManager'
    : service === 'dynamodb'
      ? 'DynamoDb'
      : service === 'xray'
        ? 'XRay'
        : service.toUpperCase();
}
