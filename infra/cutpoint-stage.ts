import type { Environment, RemovalPolicy } from 'aws-cdk-lib';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import type { BackoffPolicy } from '../src/domain/delivery/recovery-backoff.js';
import { ConfigError } from '../src/domain/errors.js';
import { DEFAULT_STAGE, secretPrefixOf, stackNamesOf, STAGE_NAME } from '../src/domain/stage.js';
import type { DeliverySecretsConfig, NetworkConfig } from './app-context.js';
import type { MaintenanceConfig } from './maintenance-schedule.js';
import { CutpointStatefulStack } from './stateful-stack.js';
import { CutpointWorkflowsStack } from './workflows-stack.js';

/** One stage of cutpoint, as a CDK app instantiates it (this repository's infra/app.ts is one such app). */
export interface CutpointStageProps {
  /**
   * The stage's name (lowercase letters and digits, a letter first, at most 12): every
   * physical name derives from it (src/domain/stage.ts). Absent or `default`: the
   * default stage, named CutpointStateful and CutpointWorkflows.
   */
  stage?: string;
  /** Account and region; absent: environment-agnostic (`cdk synth` needs no credentials). */
  env?: Environment;
  /** A VPC for the database-reaching steps (docs/deploy.md, "Private networking"); absent: none. */
  network?: NetworkConfig;
  /** The secrets the delivery steps may read; absent: those under `secretPrefix`. */
  deliverySecrets?: DeliverySecretsConfig;
  /** Where the routes' connection secrets live; absent: `cutpoint/delivery/`, or `cutpoint/<stage>/delivery/`. */
  secretPrefix?: string;
  /** The stream lanes a schedule maintains, and its rate; absent: no schedule. */
  maintenance?: MaintenanceConfig;
  /** The default orphan grace of stream-gc (`6h`); absent: the code's 24h. */
  gcGrace?: string;
  /** Days a finished delivery keeps its work objects (chunks, part plans and results) before the hourly expiry deletes them; absent: 7. */
  chunkRetentionDays?: number;
  /** How an automatic reconcile waits for an unreachable target; absent: the code's default (docs/operate.md "Automatic recovery"). */
  recoveryBackoff?: BackoffPolicy;
  /** A published copy of docs/runbook (https): inspect outputs, notices and alarms link its pages; absent: repository paths. */
  runbookBaseUrl?: string;
  /** Every step Lambda may arm CUTPOINT_FAULTS (CUTPOINT_FAULTS_IN_LAMBDA=enabled): a stage for `cutpoint gameday --aws` only. */
  gamedayFaults?: boolean;
  /** Addresses subscribed to the operations topic every alarm notifies. */
  alarms?: { emails?: readonly string[] };
  /** The stateful resources' removal policy: RETAIN (the default), or DESTROY for a throwaway stage. */
  removalPolicy?: RemovalPolicy;
  /** Function and state machine logs; absent: one year. */
  logRetention?: RetentionDays;
}

/**
 * The two stacks of one stage: the stateful stack (authority table, object bucket, the
 * incident and operations topics; retained) and the workflows stack (functions, state
 * machines, the recovery dispatcher, schedule; the alarms and dashboard in its nested
 * operations stack, infra/operations-stack.ts). Their construct paths
 * are `<id>/Stateful` and `<id>/Workflows` (`cdk deploy '<id>/*'` deploys the stage), their
 * CloudFormation names come from the stage.
 */
export class CutpointStage extends Construct {
  readonly stage: string | undefined;
  readonly stateful: CutpointStatefulStack;
  readonly workflows: CutpointWorkflowsStack;

  constructor(scope: Construct, id: string, props: CutpointStageProps = {}) {
    super(scope, id);
    const stage = props.stage === DEFAULT_STAGE ? undefined : props.stage;
    if (stage !== undefined && !STAGE_NAME.test(stage))
      throw new ConfigError(
        'infra.stage_invalid',
        `a stage name is lowercase letters and digits, a letter first, at most 12: ${JSON.stringify(stage)}`,
      );
    this.stage = stage;
    const names = stackNamesOf(stage);
    const env = props.env ? { env: props.env } : {};
    this.stateful = new CutpointStatefulStack(this, 'Stateful', {
      stackName: names.stateful,
      description: `cutpoint${stage ? ` (${stage})` : ''}: authority table and object bucket (retained)`,
      ...env,
      ...(props.removalPolicy ? { removalPolicy: props.removalPolicy } : {}),
      ...(props.alarms?.emails ? { alarmEmails: props.alarms.emails } : {}),
    });
    this.workflows = new CutpointWorkflowsStack(this, 'Workflows', {
      stackName: names.workflows,
      description: `cutpoint${stage ? ` (${stage})` : ''}: step functions, state machines, the recovery dispatcher, alarms and dashboard`,
      ...env,
      // One function and state machine (its ASL inline) per registry entry: unindented, ~510 KB
      // of CloudFormation's 1 MB; its nested operations stack (alarms, dashboard) ~270 KB
      // (test/infra/stacks.test.ts bounds both).
      suppressTemplateIndentation: true,
      stateful: this.stateful.refs,
      secretPrefix: props.secretPrefix ?? secretPrefixOf(stage),
      ...(props.deliverySecrets ? { deliverySecrets: props.deliverySecrets } : {}),
      ...(props.network ? { network: props.network } : {}),
      ...(props.gcGrace ? { gcGrace: props.gcGrace } : {}),
      ...(props.maintenance ? { maintenance: props.maintenance } : {}),
      ...(props.chunkRetentionDays !== undefined ? { chunkRetentionDays: props.chunkRetentionDays } : {}),
      ...(props.recoveryBackoff ? { recoveryBackoff: props.recoveryBackoff } : {}),
      ...(props.runbookBaseUrl ? { runbookBaseUrl: props.runbookBaseUrl } : {}),
      ...(props.gamedayFaults ? { gamedayFaults: true } : {}),
      ...(props.logRetention ? { logRetention: props.logRetention } : {}),
    });
    // The workflows import the stateful stack's exports by name, which CDK cannot see.
    this.workflows.addStackDependency(this.stateful);
  }
}
