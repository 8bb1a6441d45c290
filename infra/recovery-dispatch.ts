import { ArnFormat, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { EventField, Rule, RuleTargetInput } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { Architecture, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { StateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import type { FlowEntry } from '../src/registry/index.js';
import { loadAsl } from '../src/local/asl.js';
import { designedStopErrors, TERMINAL_STATUSES } from '../src/recovery/designed-stops.js';
import type { DispatchTarget } from '../src/recovery/dispatch-request.js';
import { RECOVERY_FLOWS, recoveryStopsOf } from '../src/recovery/recovery-stops.js';
import { INCIDENT_TOPIC_ENV } from '../functions/lib/incident-topic.js';
import { lambdaBundling } from './bundling.js';
import { grantHistoryKey } from './history-key.js';
import { acknowledgeWildcardResource } from './nag.js';
import { REPO_ROOT } from '../src/local/asl.js';
import { RUNBOOK_BASE_URL_ENV } from '../src/docs/runbook/ref.js';
import { repoPath } from './repo.js';
import { TargetDeadLetterQueue } from './recovery-dispatch-queue.js';
import { incidentTopicStatements, type DataArns } from './step-policy.js';

export interface RecoveryDispatchProps {
  /** Every registry flow; EXPRESS ones emit no status-change events and get no rule. */
  flows: readonly FlowEntry[];
  /** State machines by flow name. */
  stateMachines: ReadonlyMap<string, StateMachine>;
  logRetention: RetentionDays;
  /** The flows' execution history key: starting a recovery and reading a failed execution's input use it. */
  historyKey: IKey;
  /** The incident topic a recovery that stopped for an operator is published to (sns:Publish on it only). */
  incident: Pick<DataArns, 'incidentTopicArn' | 'incidentKeyArn'>;
  /** A published copy of docs/runbook: the notices link there (CUTPOINT_RUNBOOK_BASE_URL). */
  runbookBaseUrl?: string;
}

/**
 * EventBridge → the recovery dispatcher (functions/recovery/dispatch.ts): one rule per
 * STANDARD flow routes every terminal status of its executions to one Lambda, with the
 * flow's constant facts as the target input (its designed stops, read from its ASL, and
 * the registry's recovery with the recovering state machine's ARN) and the event's detail
 * (the fields the dispatcher reads). A flow that runs recoveries also gets its recovery
 * stops (src/recovery/recovery-stops.ts, checked against its ASL here): a designed stop of a
 * recovery execution that pages is published to the incident topic, and so is any other
 * failure, timeout or abort of one (unclassified, with the error and the redacted cause
 * DescribeExecution gives); a deterministic stop is not re-run.
 * The dispatcher counts every outcome and starts a recovery, under a name derived from the
 * failed execution, only where the registry says. EventBridge retries a failed delivery
 * (maxEventAge), Lambda retries a failed run twice; what still fails lands in one
 * dead-letter queue with a depth alarm.
 */
export class RecoveryDispatch extends Construct {
  readonly fn: NodejsFunction;
  readonly deadLetters: TargetDeadLetterQueue;
  /** The rule of each STANDARD flow, by flow name. */
  readonly rules = new Map<string, Rule>();

  constructor(
    scope: Construct,
    id: string,
    { flows, stateMachines, logRetention, historyKey, incident, runbookBaseUrl }: RecoveryDispatchProps,
  ) {
    super(scope, id);
    const machine = (name: string): StateMachine => {
      const found = stateMachines.get(name);
      if (!found) throw new Error(`recovery dispatch: flow ${name} is not in the registry`);
      return found;
    };
    for (const flow of flows) {
      if (flow.recovery && flow.type !== 'STANDARD')
        throw new Error(`${flow.name}: only a STANDARD flow can declare recovery`);
      if (flow.recovery) machine(flow.recovery.by);
      if (flow.recovery && !Object.hasOwn(RECOVERY_FLOWS, flow.recovery.by))
        throw new Error(
          `${flow.name}: its recovery ${flow.recovery.by} must classify its designed stops in src/recovery/recovery-stops.ts`,
        );
    }

    this.deadLetters = new TargetDeadLetterQueue(this, 'DeadLetters', {
      purpose: 'execution status changes the recovery dispatcher could not take or act on',
    });
    this.fn = this.dispatcher(logRetention, incident.incidentTopicArn, runbookBaseUrl);
    this.grant(flows, machine, historyKey);
    for (const statement of incidentTopicStatements(incident)) this.fn.addToRolePolicy(statement);

    for (const flow of flows.filter((f) => f.type === 'STANDARD')) {
      const stateMachine = machine(flow.name);
      const definition = loadAsl(flow.name);
      const recoveryStops = recoveryStopsOf(flow.name, definition);
      const target: DispatchTarget = {
        flow: flow.name,
        designedStops: designedStopErrors(definition),
        ...(flow.recovery
          ? {
              recovery: {
                by: flow.recovery.by,
                stateMachineArn: machine(flow.recovery.by).stateMachineArn,
                on: [...flow.recovery.on],
              },
            }
          : {}),
        ...(recoveryStops ? { recoveryStops } : {}),
      };
      const rule = new Rule(this, `${pascal(flow.name)}Rule`, {
        description: `${flow.name}: every ended execution to the recovery dispatcher${flow.recovery ? ` (starts ${flow.recovery.by} on ${flow.recovery.on.join(', ')})` : ' (counted only)'}`,
        eventPattern: {
          source: ['aws.states'],
          detailType: ['Step Functions Execution Status Change'],
          detail: { status: [...TERMINAL_STATUSES], stateMachineArn: [stateMachine.stateMachineArn] },
        },
        targets: [
          new LambdaFunction(this.fn, {
            event: RuleTargetInput.fromObject({ ...target, detail: DETAIL }),
            deadLetterQueue: this.deadLetters.queue,
            retryAttempts: 24,
            maxEventAge: Duration.hours(6),
          }),
        ],
      });
      this.rules.set(flow.name, rule);
    }
  }

  private dispatcher(logRetention: RetentionDays, incidentTopicArn: string, runbookBaseUrl?: string): NodejsFunction {
    const logGroup = new LogGroup(this, 'Logs', { retention: logRetention, removalPolicy: RemovalPolicy.RETAIN });
    const role = new Role(this, 'Role', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description:
        'cutpoint recovery dispatcher: start the recovering flows, describe the recovered and recovery executions, publish to the incident topic, its own log group',
    });
    logGroup.grantWrite(role);
    const fn = new NodejsFunction(this, 'Function', {
      description: 'cutpoint functions/recovery/dispatch.ts',
      entry: repoPath('functions/recovery/dispatch.ts'),
      handler: 'handler',
      projectRoot: REPO_ROOT,
      depsLockFilePath: repoPath('package-lock.json'),
      runtime: Runtime.NODEJS_24_X,
      architecture: Architecture.ARM_64,
      memorySize: 256,
      timeout: Duration.seconds(30),
      role,
      logGroup,
      tracing: Tracing.ACTIVE,
      // Asynchronous invocation (EventBridge): two more tries, then the same dead-letter queue.
      retryAttempts: 2,
      maxEventAge: Duration.hours(6),
      deadLetterQueue: this.deadLetters.queue,
      environment: {
        NODE_OPTIONS: '--enable-source-maps',
        [INCIDENT_TOPIC_ENV]: incidentTopicArn,
        ...(runbookBaseUrl ? { [RUNBOOK_BASE_URL_ENV]: runbookBaseUrl } : {}),
      },
      bundling: lambdaBundling(),
    });
    acknowledgeWildcardResource(
      role,
      '*',
      'X-Ray PutTraceSegments and PutTelemetryRecords do not support resource-level permissions; "*" is the only resource they accept (added by tracing: ACTIVE).',
    );
    return fn;
  }

  /**
   * StartExecution on exactly the recovering state machines; DescribeExecution (an event's
   * input cut short) on executions of exactly the recovered flows and the flows that run
   * recoveries (RECOVERY_FLOWS: a stop's notice reads the input, an unclassified failure's
   * its error and cause).
   */
  private grant(flows: readonly FlowEntry[], machine: (name: string) => StateMachine, historyKey: IKey): void {
    const recovered = flows.filter((f) => f.recovery);
    const recovering = [...new Set(recovered.map((f) => f.recovery!.by))].map(machine);
    if (recovering.length > 0)
      this.fn.addToRolePolicy(
        new PolicyStatement({
          sid: 'StartRecoveries',
          actions: ['states:StartExecution'],
          resources: recovering.map((m) => m.stateMachineArn),
        }),
      );
    const described = flows
      .filter((f) => f.recovery || Object.hasOwn(RECOVERY_FLOWS, f.name))
      .map((f) => machine(f.name));
    if (described.length === 0) return;
    const stack = Stack.of(this);
    const executions = described.map((m) =>
      stack.formatArn({
        service: 'states',
        resource: 'execution',
        resourceName: `${m.stateMachineName}:*`,
        arnFormat: ArnFormat.COLON_RESOURCE_NAME,
      }),
    );
    this.fn.addToRolePolicy(
      new PolicyStatement({
        sid: 'DescribeEndedExecutions',
        actions: ['states:DescribeExecution'],
        resources: executions,
      }),
    );
    // Both sides keep their history under the history key (infra/history-key.ts).
    grantHistoryKey(
      this.fn,
      historyKey,
      recovering.map((m) => m.stateMachineArn),
      'start',
    );
    grantHistoryKey(
      this.fn,
      historyKey,
      described.map((m) => m.stateMachineArn),
      'read',
    );
    for (const arn of executions) {
      acknowledgeWildcardResource(
        this.fn.role!,
        arn,
        "An ended execution's name is chosen at run time; DescribeExecution (the full input of an event that carried it cut short, a failed recovery's error and cause) is limited to executions of one state machine whose failures this dispatcher recovers or whose recovery stops and failures it reports.",
      );
    }
  }
}

/**
 * The fields of the event's detail the dispatcher reads, and only those: an execution's
 * output and cause (up to 256 KiB and 32 KiB) never ride along into the Lambda's
 * asynchronous payload.
 */
const DETAIL = Object.fromEntries(
  ['executionArn', 'name', 'status', 'input', 'inputDetails', 'error'].map((field) => [
    field,
    EventField.fromPath(`$.detail.${field}`),
  ]),
);

/** `commit-generation` -> `CommitGeneration`. */
function pascal(name: string): string {
  return name.replace(/(^|-)([a-z0-9])/g, (_m, _dash: string, c: string) => c.toUpperCase());
}
