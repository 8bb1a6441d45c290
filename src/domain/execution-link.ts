/**
 * The Step Functions console page of one execution: the region is read from its ARN
 * (`arn:<partition>:states:<region>:<account>:execution:<flow>:<name>`). Undefined for a
 * string that is not an execution ARN (a local run's id): a notice then names the ARN only.
 */
export function executionConsoleLink(executionArn: string): string | undefined {
  const match = /^arn:aws[a-z-]*:states:([a-z]{2}(?:-[a-z]+)+-\d):\d{12}:execution:[^:]+:[^:]+$/.exec(executionArn);
  if (!match) return undefined;
  const region = match[1]!;
  return `https://${region}.console.aws.amazon.com/states/home?region=${region}#/v2/executions/details/${executionArn}`;
}
