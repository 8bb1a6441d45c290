/**
 * What a registry step is (docs/architecture.md 'The layers lint holds'): one Task's Lambda, named by its
 * handler's path under functions/, with the IAM actions, errors, timeout and memory CDK
 * and the ASL generator read. Every entry is written through `stepEntry()`, by field name; the
 * CDK entry file, the ASL placeholder and what the Lambda may reach (secrets, the incident
 * topic) are derived from `handler` and `needs`, never written twice.
 */
import { handlerPlaceholder } from '../engine/flow-path.js';
import type { Needs, StepModule } from './handler-contract.js';

/** The DynamoDB and S3 actions a step may use; CDK grants exactly these. */
export type TableAction =
  | 'dynamodb:GetItem'
  | 'dynamodb:Query'
  | 'dynamodb:PutItem'
  | 'dynamodb:UpdateItem'
  | 'dynamodb:DeleteItem'
  | 'dynamodb:ConditionCheckItem'
  /** The authority table's binding (TableArn, TableId, CreationDateTime) sealed in the quality core: quality steps only. */
  | 'dynamodb:DescribeTable';
export type BucketAction = 's3:GetObject' | 's3:PutObject' | 's3:ListBucket' | 's3:DeleteObject';
/** Which connection secrets a step reads: the route's source and target, or its target only. */
export type SecretScope = 'source-and-target' | 'target';

/**
 * The cut points a step's use case can cross, in the order it crosses them (src/<subsystem>/cut-points.ts).
 * Where the route's publication mode decides which (docs/architecture.md "Glossary": publication mode), each
 * mode's: `transaction` (a SQL route: deliver-window) and `exchange` (a ClickHouse route:
 * publish-clickhouse). flow-cut-points.ts reads them along a flow.
 */
export type StepCutPoints =
  readonly string[] | { readonly transaction: readonly string[]; readonly exchange: readonly string[] };

/** Every cut point a step can cross, whichever its publication mode. */
export function everyCutPoint(cuts: StepCutPoints): readonly string[] {
  return 'transaction' in cuts ? [...cuts.transaction, ...cuts.exchange] : cuts;
}

/** What a registry entry declares; `step()` derives the rest. */
export interface StepSpec {
  /**
   * The handler module's path under functions/, without extension (`delivery/begin`): it
   * exports `makeHandler(needs)` and `handler` (handler-contract.ts).
   */
  handler: string;
  /** What its `makeHandler` is given, and so what its Lambda may reach (handler-contract.ts). */
  needs: Needs;
  /** The module, by a literal dynamic import (the CLI bundle follows only literal ones). */
  load: () => Promise<StepModule>;
  table: readonly TableAction[];
  bucket: readonly BucketAction[];
  /** Key prefixes the object actions are limited to; absent: every key of the bucket. */
  objectPrefixes?: readonly string[];
  /** Key prefixes s3:PutObject and s3:DeleteObject are limited to, when narrower than objectPrefixes (reads). */
  writePrefixes?: readonly string[];
  /** With dynamodb:DeleteItem: the partition-key patterns it is limited to (dynamodb:LeadingKeys). */
  deleteLeadingKeys?: readonly string[];
  /** Error names the handler raises on purpose; every Task using it must retry or catch each. */
  errors: readonly string[];
  /** Lambda timeout; the Task's TimeoutSeconds in the ASL must exceed it. */
  timeoutSeconds: number;
  memoryMB: number;
  /** The cut points its use case can cross, in order; `[]` when it crosses none. */
  cutPoints: StepCutPoints;
  /**
   * `schedule`: an EventBridge schedule invokes the function directly, no flow's Task does
   * (the retained-items sweep); absent: it is a Task of some flow (statemachines/asl.test.ts
   * holds both).
   */
  invokedBy?: 'schedule';
}

export interface StepEntry extends StepSpec {
  /** Placeholder name used in ASL as `${placeholder}`: handlerPlaceholder(handler). */
  placeholder: string;
  /** Handler source, relative to the repository root: `functions/<handler>.ts`. */
  entry: string;
  /**
   * Opens the route's source and/or target (a database): reads their connection secrets
   * (secretsmanager:GetSecretValue) and, with a VPC configured, runs in it. From `needs`:
   * `source-and-target` for `delivery-source` (the handlers over lambdaSourceDeps: begin,
   * plan-parts, extract-load-part), the only roles that may read source secrets
   * (`cutpoint/delivery/source/`); `target` for `delivery-target` (target secrets only,
   * `cutpoint/delivery/target/`). Absent: the step never opens a database (no secret, no VPC).
   */
  readsSecrets?: SecretScope;
  /** Publishes to the incident SNS topic (sns:Publish on that topic only): `needs` includes the notifier. */
  notifies?: boolean;
}

/** The one way to write a registry entry: named fields, the rest derived. */
export function stepEntry(spec: StepSpec): StepEntry {
  return {
    ...spec,
    placeholder: handlerPlaceholder(spec.handler),
    entry: `functions/${spec.handler}.ts`,
    ...(spec.needs === 'delivery-source' ? { readsSecrets: 'source-and-target' as const } : {}),
    ...(spec.needs === 'delivery-target' ? { readsSecrets: 'target' as const } : {}),
    ...(spec.needs === 'ports-notifier' ? { notifies: true } : {}),
  };
}
