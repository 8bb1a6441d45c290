import type { CfnElement, Stack } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';

/** The logical id of a construct's CloudFormation resource in its (innermost, nested or not) stack's template. */
export function logicalId(construct: IConstruct): string {
  const stack = construct.node.scopes.findLast((s): s is Stack => 'templateOptions' in s);
  if (!stack) throw new Error(`${construct.node.path} is not in a stack`);
  return stack.getLogicalId(construct.node.defaultChild as CfnElement);
}
