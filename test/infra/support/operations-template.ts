import type { CfnElement } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type { CutpointWorkflowsStack } from '../../../infra/workflows-stack.js';

/**
 * The template of a workflows stack's nested operations stack (infra/operations-stack.ts: the
 * alarms and the dashboard), each `{ Ref: <parameter> }` replaced by the value the workflows
 * stack passes that parameter (`{ Ref: <function or state machine> }`), so a test names the
 * workflows stack's resources as it would if they were in one template. Fails on a parameter
 * the workflows stack does not pass.
 */
export function operationsTemplate(workflows: CutpointWorkflowsStack): Template {
  const nested = workflows.operations;
  const resource = Template.fromStack(workflows).toJSON().Resources[
    workflows.getLogicalId(nested.nestedStackResource as CfnElement)
  ] as { Properties: { Parameters?: Record<string, unknown> } };
  const passed = resource.Properties.Parameters ?? {};
  const json = Template.fromStack(nested).toJSON() as { Parameters?: Record<string, unknown> };
  for (const name of Object.keys(json.Parameters ?? {}))
    if (!Object.hasOwn(passed, name)) throw new Error(`the workflows stack passes no value for parameter ${name}`);
  const resolve = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(resolve);
    if (value === null || typeof value !== 'object') return value;
    const entries = Object.entries(value);
    if (entries.length === 1 && entries[0]![0] === 'Ref' && Object.hasOwn(passed, entries[0]![1] as string))
      return passed[entries[0]![1] as string];
    return Object.fromEntries(entries.map(([k, v]) => [k, resolve(v)]));
  };
  const { Parameters: _parameters, ...rest } = json;
  return Template.fromJSON(resolve(rest) as Record<string, unknown>);
}
