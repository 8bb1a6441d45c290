import type { CfnElement, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { STEPS } from '../../src/registry/index.js';
import type { CutpointApp } from '../../infra/app.js';
import { builtApp } from './support/built-app.js';
import { METRIC_NAMESPACE, SERVICE_NAME, STEP_NAME_ENV } from '../../src/telemetry/metric-names.js';
import { stepNameOf } from '../../src/telemetry/step-name.js';

let built: CutpointApp;
let workflows: Template;

beforeAll(() => {
  built = builtApp();
  workflows = Template.fromStack(built.workflows);
}, 600_000);

describe('step functions carry the telemetry environment', () => {
  it('every step names itself (the Step dimension), the Powertools service and the metric namespace, and traces', () => {
    const resources = workflows.toJSON().Resources as Record<
      string,
      { Properties: { Environment: { Variables: Record<string, unknown> }; TracingConfig: unknown } }
    >;
    const names = new Set<string>();
    for (const step of STEPS) {
      const fn = built.workflows.functions.get(step.placeholder)!;
      const stack = fn.node.scopes.find((s): s is Stack => 'templateOptions' in s)!;
      const props = resources[stack.getLogicalId(fn.node.defaultChild as CfnElement)]!.Properties;
      expect(props.TracingConfig).toEqual({ Mode: 'Active' });
      expect(props.Environment.Variables).toMatchObject({
        [STEP_NAME_ENV]: stepNameOf(step.placeholder),
        POWERTOOLS_SERVICE_NAME: SERVICE_NAME,
        POWERTOOLS_METRICS_NAMESPACE: METRIC_NAMESPACE,
      });
      names.add(stepNameOf(step.placeholder));
    }
    // One Step dimension value per step: the dimension stays a closed set.
    expect(names.size).toBe(STEPS.length);
  });
});
