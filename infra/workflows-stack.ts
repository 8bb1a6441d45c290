import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { StateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import type { Construct } from 'constructs';
import { FLOWS, STEPS } from '../functions/registry.js';
import { Flow } from './flow.js';
import { RecoveryRule } from './recovery-rule.js';
import type { StatefulRefs } from './stateful-stack.js';
import { StepFunction } from './step-function.js';

export interface WorkflowsStackProps extends StackProps {
  stateful: StatefulRefs;
  /** Function and state machine logs: long enough to investigate a recovery after the fact. */
  logRetention?: RetentionDays;
}

/**
 * Everything replaceable: one function per registry step, one state machine per registry
 * flow, and the EventBridge rules that recover failed STANDARD executions. Adding a step
 * or a flow to functions/registry.ts is all it takes to deploy it.
 */
export class CutpointWorkflowsStack extends Stack {
  /** Functions by registry placeholder. */
  readonly functions = new Map<string, IFunction>();
  /** State machines by flow name. */
  readonly stateMachines = new Map<string, StateMachine>();

  constructor(scope: Construct, id: string, props: WorkflowsStackProps) {
    super(scope, id, props);
    const logRetention = props.logRetention ?? RetentionDays.ONE_YEAR;

    for (const step of STEPS) {
      const { fn } = new StepFunction(this, constructId(step.placeholder), { step, data: props.stateful, logRetention });
      this.functions.set(step.placeholder, fn);
    }

    for (const flow of FLOWS) {
      const id = `${pascal(flow.name)}Flow`;
      const { stateMachine } = new Flow(this, id, { flow, functions: this.functions, logRetention });
      this.stateMachines.set(flow.name, stateMachine);
      // EXPRESS executions emit no status-change events; recovery is for STANDARD only.
      if (flow.recoverOnFailure && flow.type === 'STANDARD') new RecoveryRule(this, `${pascal(flow.name)}Recovery`, { flowName: flow.name, stateMachine });
      new CfnOutput(this, `${pascal(flow.name)}StateMachineArn`, {
        value: stateMachine.stateMachineArn,
        description: `${flow.name}: ${flow.description}`,
      });
    }
  }
}

/** `WriteGenerationObjectFunctionArn` -> `WriteGenerationObjectStep`. */
function constructId(placeholder: string): string {
  return `${placeholder.replace(/FunctionArn$/, '')}Step`;
}

/** `commit-generation` -> `CommitGeneration`. */
function pascal(name: string): string {
  return name.replace(/(^|-)([a-z0-9])/g, (_m, _dash: string, c: string) => c.toUpperCase());
}
