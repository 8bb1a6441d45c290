import { Aspects, Aws, CfnOutput, Duration, Stack, type StackProps } from 'aws-cdk-lib';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Topic } from 'aws-cdk-lib/aws-sns';
import type { StateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import type { Construct } from 'constructs';
import type { BackoffPolicy } from '../src/domain/delivery/recovery-backoff.js';
import { DEFAULT_RETENTION_DAYS, validateRetentionDays } from '../src/domain/delivery/work-objects.js';
import { secretPrefixOf } from '../src/domain/stage.js';
import { DEFAULT_RETAINED_AFTER_MINUTES } from '../src/operations/retained.js';
import { FLOWS, STEPS, stepByHandler } from '../src/registry/index.js';
import { AlarmActions } from './alarm-actions.js';
import { loadFlowDefinition } from './asl.js';
import type { DeliverySecretsConfig, NetworkConfig } from './app-context.js';
import { Flow } from './flow.js';
import { executionHistoryKey } from './history-key.js';
import { runbookBase, RUNBOOK_BASE_URL_ENV } from '../src/docs/runbook/ref.js';
import { FAULTS_IN_LAMBDA_ENV } from '../src/domain/faults.js';
import { FlowSchedule } from './flow-schedule.js';
import type { MaintenanceConfig } from './maintenance-schedule.js';
import { interfaceServicesFor, PrivateNetwork } from './network.js';
import { OperationsStack } from './operations-stack.js';
import { RecoveryDispatch } from './recovery-dispatch.js';
import { RetainedSweep } from './retained-sweep.js';
import type { StatefulRefs } from './stateful-stack.js';
import { StepFunction } from './step-function.js';

export interface WorkflowsStackProps extends StackProps {
  stateful: StatefulRefs;
  /**
   * Secrets the delivery steps may read (ARNs or ARN patterns): `source` by the steps
   * that open the source only, `target` by every step that opens a database. Defaults:
   * the secrets named `<secretPrefix>source/*` and `<secretPrefix>target/*` in the stack's
   * account and region.
   */
  deliverySecrets?: DeliverySecretsConfig;
  /** Where the routes' connection secrets live (`cutpoint/delivery/`; per stage: src/domain/stage.ts). */
  secretPrefix?: string;
  /** A VPC for the database-reaching steps (docs/deploy.md, "Private networking"); absent: none. */
  network?: NetworkConfig;
  /** Function and state machine logs: long enough to investigate a recovery after the fact. */
  logRetention?: RetentionDays;
  /** The stream lanes a schedule maintains (stream-maintain); absent: no schedule. */
  maintenance?: MaintenanceConfig;
  /** The default orphan grace of stream-gc (`6h`; cutpoint:gcGrace); absent: the code's 24h. */
  gcGrace?: string;
  /** Days a finished delivery keeps its work objects (chunks, part plans and results); absent: 7. */
  chunkRetentionDays?: number;
  /** How an automatic reconcile waits for its target (CUTPOINT_RECOVERY_BACKOFF); absent: the code's default. */
  recoveryBackoff?: BackoffPolicy;
  /** A published copy of docs/runbook (CUTPOINT_RUNBOOK_BASE_URL): outputs, notices and alarms link there; absent: repository paths. */
  runbookBaseUrl?: string;
  /** Every step Lambda may arm CUTPOINT_FAULTS (a game day stage: `cutpoint gameday --aws`); absent: none may. */
  gamedayFaults?: boolean;
}

/**
 * Everything replaceable: one function per registry step, one state machine per registry
 * flow, and the recovery dispatcher every STANDARD execution's end is routed to. Adding a step
 * or a flow to the registry (src/registry/) is all it takes to deploy it.
 */
export class CutpointWorkflowsStack extends Stack {
  /** Functions by registry placeholder. */
  readonly functions = new Map<string, IFunction>();
  /** State machines by flow name. */
  readonly stateMachines = new Map<string, StateMachine>();
  /** The stream maintenance schedule, when lanes are configured. */
  readonly maintenance?: FlowSchedule;
  /** The hourly delivery-expire schedule: finished deliveries' work objects past the retention. */
  readonly chunkExpiry: FlowSchedule;
  /** EventBridge → the recovery dispatcher: outcomes of every STANDARD flow, recoveries where the registry declares them. */
  readonly recovery: RecoveryDispatch;
  /** The nested stack of the alarms per flow, step, recovery outcome and table, and the dashboard. */
  readonly operations: OperationsStack;

  constructor(scope: Construct, id: string, props: WorkflowsStackProps) {
    super(scope, id, props);
    const logRetention = props.logRetention ?? RetentionDays.ONE_YEAR;

    const base = props.secretPrefix ?? secretPrefixOf(undefined);
    const secretPrefix = (prefix: string) => [
      `arn:${Aws.PARTITION}:secretsmanager:${Aws.REGION}:${Aws.ACCOUNT_ID}:secret:${prefix}*`,
    ];
    const deliverySecrets = {
      source: props.deliverySecrets?.source ?? secretPrefix(`${base}source/`),
      target: props.deliverySecrets?.target ?? secretPrefix(`${base}target/`),
    };
    const data = { ...props.stateful, deliverySecrets };
    const network = props.network
      ? new PrivateNetwork(this, 'PrivateNetwork', {
          config: props.network,
          interfaceServices: interfaceServicesFor(STEPS),
        }).attachment
      : undefined;
    const gcSteps = new Set(loadFlowDefinition('stream-gc').steps.map((s) => s.placeholder));
    // Deploy-time settings of single steps, as their environment.
    const settingsOf = (step: (typeof STEPS)[number]): Record<string, string> => ({
      ...(props.runbookBaseUrl ? { [RUNBOOK_BASE_URL_ENV]: props.runbookBaseUrl } : {}),
      ...(props.gamedayFaults ? { [FAULTS_IN_LAMBDA_ENV]: 'enabled' } : {}),
      ...(props.gcGrace && gcSteps.has(step.placeholder) ? { CUTPOINT_GC_GRACE: props.gcGrace } : {}),
      ...(props.recoveryBackoff && step.handler === 'delivery/probe-target'
        ? { CUTPOINT_RECOVERY_BACKOFF: JSON.stringify(props.recoveryBackoff) }
        : {}),
    });
    for (const step of STEPS) {
      const settings = settingsOf(step);
      const environment = Object.keys(settings).length ? settings : undefined;
      const { fn } = new StepFunction(this, constructId(step.placeholder), {
        step,
        data,
        logRetention,
        ...(network ? { network } : {}),
        ...(environment ? { environment } : {}),
      });
      this.functions.set(step.placeholder, fn);
    }

    const historyKey = executionHistoryKey(this, 'ExecutionHistoryKey');
    for (const flow of FLOWS) {
      const id = `${pascal(flow.name)}Flow`;
      const { stateMachine } = new Flow(this, id, {
        flow,
        functions: this.functions,
        logRetention,
        bucketArn: props.stateful.bucketArn,
        stateMachines: this.stateMachines,
        historyKey,
      });
      this.stateMachines.set(flow.name, stateMachine);
      new CfnOutput(this, `${pascal(flow.name)}StateMachineArn`, {
        value: stateMachine.stateMachineArn,
        description: `${flow.name}: ${flow.description}`,
      });
    }

    if (props.maintenance) {
      const { lanes, rate } = props.maintenance;
      this.maintenance = new FlowSchedule(this, 'StreamMaintenanceSchedule', {
        flow: 'stream-maintain',
        stateMachine: this.stateMachines.get('stream-maintain')!,
        historyKey,
        input: { lanes },
        rate,
        description: `Maintain ${lanes.length} stream lane(s) every ${rate.toMinutes()} minute(s): stream-materialize, stream-compact, stream-gc`,
      });
    }
    const retentionDays = validateRetentionDays(props.chunkRetentionDays ?? DEFAULT_RETENTION_DAYS);
    this.chunkExpiry = new FlowSchedule(this, 'ChunkExpirySchedule', {
      flow: 'delivery-expire',
      stateMachine: this.stateMachines.get('delivery-expire')!,
      historyKey,
      input: { retentionDays },
      rate: Duration.hours(1),
      description: `Every hour: delete the work objects of deliveries finished more than ${retentionDays} day(s) ago (delivery-expire)`,
    });

    // The retained-items gauge: a scheduled sweep whose alarms stay in ALARM while an item is retained.
    new RetainedSweep(this, 'RetainedSweep', {
      fn: this.functions.get(stepByHandler('operations/sweep-retained').placeholder)!,
      retainedAfterMinutes: DEFAULT_RETAINED_AFTER_MINUTES,
      lanes: props.maintenance?.lanes ?? [],
    });

    // After every state machine exists: a recovery flow may be declared after the flow it recovers.
    this.recovery = new RecoveryDispatch(this, 'RecoveryDispatch', {
      flows: FLOWS,
      stateMachines: this.stateMachines,
      logRetention,
      historyKey,
      incident: props.stateful,
      ...(props.runbookBaseUrl ? { runbookBaseUrl: props.runbookBaseUrl } : {}),
    });

    // Alarms per flow, step, recovery outcome and on the authority table, one dashboard: in a
    // nested stack (operations-stack.ts). Every alarm of this stack and of the nested one
    // (these, and any other construct's) notifies the operations topic (alarm-actions.ts).
    this.operations = new OperationsStack(this, 'Operations', {
      flows: FLOWS.map((flow) => ({ flow, stateMachine: this.stateMachines.get(flow.name)! })),
      functions: this.functions,
      tableName: props.stateful.tableName,
      namePrefix: `${this.stackName}-ops`,
      retainedAfterMinutes: DEFAULT_RETAINED_AFTER_MINUTES,
      ...(props.runbookBaseUrl ? { runbookBase: runbookBase({ [RUNBOOK_BASE_URL_ENV]: props.runbookBaseUrl }) } : {}),
    });
    Aspects.of(this).add(
      new AlarmActions(Topic.fromTopicArn(this, 'OperationsTopic', props.stateful.operationsTopicArn)),
    );
  }
}

/** `GenerationWriteObjectFunctionArn` -> `GenerationWriteObjectStep`. */
function constructId(placeholder: string): string {
  return `${placeholder.replace(/FunctionArn$/, '')}Step`;
}

/** `commit-generation` -> `CommitGeneration`. */
function pascal(name: string): string {
  return name.replace(/(^|-)([a-z0-9])/g, (_m, _dash: string, c: string) => c.toUpperCase());
}
