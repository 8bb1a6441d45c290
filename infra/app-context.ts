import { ConfigError } from '../src/domain/errors.js';
import { parseGrace } from '../src/stream/gc/model.js';

/**
 * The CDK context values (`cdk deploy -c key=value`) for private networking and the
 * delivery secrets, validated at synth with a stable code (`infra.<reason>`) before any
 * construct exists. Pure: reads a context getter, builds nothing.
 */
export type ContextGetter = (key: string) => unknown;

/**
 * The VPC the database-reaching steps run in (src/registry/ `readsSecrets`, from its `needs`).
 * Imported by id: the stacks stay environment-agnostic (no lookup).
 */
export interface NetworkConfig {
  vpcId: string;
  subnetIds: string[];
  securityGroupIds: string[];
  /**
   * `create`: the stack creates the endpoints the steps need (S3 and DynamoDB gateway
   * endpoints on `routeTableIds`, interface endpoints in `subnetIds`); `existing`: the VPC
   * already has them (or a NAT) and the stack creates none.
   */
  endpoints: 'create' | 'existing';
  /** The route tables of `subnetIds` (gateway endpoints attach there); empty with `existing`. */
  routeTableIds: string[];
}

const VPC_KEYS = ['cutpoint:vpcId', 'cutpoint:subnetIds', 'cutpoint:securityGroupIds'] as const;
const ID = {
  vpc: /^vpc-[0-9a-f]{8}(?:[0-9a-f]{9})?$/,
  subnet: /^subnet-[0-9a-f]{8}(?:[0-9a-f]{9})?$/,
  securityGroup: /^sg-[0-9a-f]{8}(?:[0-9a-f]{9})?$/,
  routeTable: /^rtb-[0-9a-f]{8}(?:[0-9a-f]{9})?$/,
};

/** A stage's `vpcId`, `subnetIds`, `securityGroupIds` (cutpoint.config.json, or a one-deploy `-c cutpoint:<setting>`; docs/deploy.md, "Private networking"). */
export function networkConfigOf(context: ContextGetter): NetworkConfig | undefined {
  const given = VPC_KEYS.filter((key) => context(key) !== undefined);
  const endpointsValue = context('cutpoint:vpcEndpoints');
  const routeTablesValue = context('cutpoint:routeTableIds');
  if (given.length === 0) {
    if (endpointsValue !== undefined || routeTablesValue !== undefined) {
      throw new ConfigError(
        'infra.vpc_context_incomplete',
        'cutpoint:vpcEndpoints and cutpoint:routeTableIds apply only with cutpoint:vpcId, cutpoint:subnetIds and cutpoint:securityGroupIds',
      );
    }
    return undefined;
  }
  if (given.length < VPC_KEYS.length) {
    const missing = VPC_KEYS.filter((key) => !given.includes(key));
    throw new ConfigError(
      'infra.vpc_context_incomplete',
      `a VPC needs ${VPC_KEYS.join(', ')} together; missing ${missing.join(', ')}`,
    );
  }
  const vpcId = String(context('cutpoint:vpcId')).trim();
  if (!ID.vpc.test(vpcId))
    throw new ConfigError('infra.vpc_id_invalid', 'cutpoint:vpcId must be a VPC id (vpc- and 8 or 17 hex digits)');
  const subnetIds = idList(
    context('cutpoint:subnetIds'),
    'cutpoint:subnetIds',
    ID.subnet,
    'infra.subnet_ids_invalid',
    'subnet ids (subnet-…)',
  );
  const securityGroupIds = idList(
    context('cutpoint:securityGroupIds'),
    'cutpoint:securityGroupIds',
    ID.securityGroup,
    'infra.security_group_ids_invalid',
    'security group ids (sg-…)',
  );
  const endpoints = endpointsValue === undefined ? 'create' : String(endpointsValue).trim();
  if (endpoints !== 'create' && endpoints !== 'existing') {
    throw new ConfigError(
      'infra.vpc_endpoints_invalid',
      'cutpoint:vpcEndpoints must be create (the default) or existing',
    );
  }
  if (endpoints === 'existing') {
    if (routeTablesValue !== undefined)
      throw new ConfigError(
        'infra.vpc_context_incomplete',
        'cutpoint:routeTableIds applies only when the stack creates the endpoints (cutpoint:vpcEndpoints=create)',
      );
    return { vpcId, subnetIds, securityGroupIds, endpoints, routeTableIds: [] };
  }
  if (routeTablesValue === undefined) {
    throw new ConfigError(
      'infra.route_table_ids_missing',
      "the S3 and DynamoDB gateway endpoints attach to route tables: set cutpoint:routeTableIds (the subnets' route tables), or cutpoint:vpcEndpoints=existing",
    );
  }
  const routeTableIds = idList(
    routeTablesValue,
    'cutpoint:routeTableIds',
    ID.routeTable,
    'infra.route_table_ids_invalid',
    'route table ids (rtb-…)',
  );
  return { vpcId, subnetIds, securityGroupIds, endpoints, routeTableIds };
}

/** A comma-separated context value (or a JSON array from cdk.json): non-empty, each matching `pattern`, no repeats. */
function idList(value: unknown, key: string, pattern: RegExp, code: string, what: string): string[] {
  const items = (Array.isArray(value) ? value : String(value).split(',')).map((v) => String(v).trim());
  if (items.length === 0 || items.some((v) => !pattern.test(v)))
    throw new ConfigError(code, `${key} must list ${what}, comma-separated`);
  if (new Set(items).size !== items.length) throw new ConfigError(code, `${key} lists an id twice`);
  return items;
}

/** Connection secrets by role; a side absent keeps its default prefix (workflows-stack.ts). */
export interface DeliverySecretsConfig {
  source?: string[];
  target?: string[];
}

const SECRET_ARN = /^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:[A-Za-z0-9/_+=.@*-]+$/;

/**
 * A stage's `deliverySourceSecretArns` / `deliveryTargetSecretArns` (cutpoint.config.json): the
 * secrets the source steps / every database step may read, when the routes' secret_arn
 * values do not live under `cutpoint/delivery/source/` / `cutpoint/delivery/target/`.
 * The earlier `cutpoint:deliverySecretArns` still works, with its earlier meaning (every
 * delivery step reads them: sources and targets alike); it cannot be combined with the two.
 */
export function deliverySecretsOf(context: ContextGetter): DeliverySecretsConfig {
  const legacy = context('cutpoint:deliverySecretArns');
  const source = context('cutpoint:deliverySourceSecretArns');
  const target = context('cutpoint:deliveryTargetSecretArns');
  if (legacy !== undefined) {
    if (source !== undefined || target !== undefined) {
      throw new ConfigError(
        'infra.delivery_secret_context_conflict',
        'cutpoint:deliverySecretArns (sources and targets alike) cannot be combined with cutpoint:deliverySourceSecretArns or cutpoint:deliveryTargetSecretArns',
      );
    }
    const arns = secretArns(legacy, 'cutpoint:deliverySecretArns');
    return { source: arns, target: arns };
  }
  return {
    ...(source !== undefined ? { source: secretArns(source, 'cutpoint:deliverySourceSecretArns') } : {}),
    ...(target !== undefined ? { target: secretArns(target, 'cutpoint:deliveryTargetSecretArns') } : {}),
  };
}

function secretArns(value: unknown, key: string): string[] {
  const arns = (Array.isArray(value) ? value : String(value).split(',')).map((a) => String(a).trim()).filter(Boolean);
  if (arns.length === 0 || arns.some((a) => !SECRET_ARN.test(a))) {
    throw new ConfigError(
      'infra.delivery_secret_arns_invalid',
      `${key} must list Secrets Manager secret ARNs (arn:aws:secretsmanager:REGION:ACCOUNT:secret:NAME, * allowed), comma-separated`,
    );
  }
  return arns;
}

/**
 * A stage's `gcGrace` (e.g. "6h", cutpoint.config.json): the orphan grace every stream-gc execution uses unless its
 * input names one (`grace`), scheduled maintenance included; set as CUTPOINT_GC_GRACE on the
 * stream-gc steps. Absent: the code's default (24h). Validated with the GC's own parser.
 */
export function gcGraceOf(context: ContextGetter): string | undefined {
  const value = context('cutpoint:gcGrace');
  if (value === undefined) return undefined;
  const grace = String(value).trim();
  try {
    parseGrace(grace);
  } catch (error) {
    throw new ConfigError('infra.gc_grace_invalid', `cutpoint:gcGrace: ${(error as Error).message}`);
  }
  return grace;
}
