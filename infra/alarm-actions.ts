import { Annotations, type IAspect } from 'aws-cdk-lib';
import { AlarmBase, CfnAlarm, CfnCompositeAlarm } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { IConstruct } from 'constructs';

/**
 * The one place that makes every alarm reach someone: an Aspect, added to each stack
 * (`Aspects.of(stack).add(new AlarmActions(topic))`), that gives every CloudWatch alarm
 * (Alarm or CompositeAlarm) of the stack the operations topic as its ALARM and OK action,
 * however and by whichever construct the alarm was created (flow alarms, the recovery
 * rules' FailedInvocations, DLQ depth alarms): nobody has to remember to wire one. An
 * alarm built as a bare CfnAlarm escapes the L2 API this uses: synthesis reports it as an
 * error (test/infra/nag.test.ts fails on any error annotation) instead of leaving it silent.
 */
export class AlarmActions implements IAspect {
  private readonly action: SnsAction;
  private readonly visited = new WeakSet<IConstruct>();

  constructor(topic: ITopic) {
    this.action = new SnsAction(topic);
  }

  visit(node: IConstruct): void {
    if (this.visited.has(node)) return;
    this.visited.add(node);
    if (node instanceof AlarmBase) {
      node.addAlarmAction(this.action);
      node.addOkAction(this.action);
      return;
    }
    if ((node instanceof CfnAlarm || node instanceof CfnCompositeAlarm) && !(node.node.scope instanceof AlarmBase)) {
      Annotations.of(node).addError(
        'cutpoint: build alarms with the L2 Alarm/CompositeAlarm so AlarmActions can give them the operations topic (infra/alarm-actions.ts)',
      );
    }
  }
}
