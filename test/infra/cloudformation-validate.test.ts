import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CloudFormationValidatePlugin, type PolicyValidationPluginReport } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';
import { afterAll, describe, expect, it } from 'vitest';
import { builtApp, VPC_CONTEXT } from './support/built-app.js';

// CDK's built-in CloudFormation validation (resource schemas and its default rules, a WASM
// engine) runs on every `cdk synth`, where it only prints: its errors are downgraded to
// warnings. Here it is asserted, once per layout, on the templates the other infra tests
// read (built without it: builtApp).
const plugin = new CloudFormationValidatePlugin();
const scratch = mkdtempSync(join(tmpdir(), 'cutpoint-cfn-validate-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function findings(report: PolicyValidationPluginReport): string[] {
  return report.violations.flatMap((v) =>
    v.violatingResources.map((r) => `${v.ruleName} (${v.severity}) at ${r.resourceLogicalId}: ${v.description}`),
  );
}

/** The plugin run as synthesis runs it, on the given templates (of `app`'s stacks, or one written for the test). */
function run(app: IConstruct, stacks: Array<{ path: string; templatePath: string }>): PolicyValidationPluginReport {
  const stackTemplates = stacks.map((s) => ({
    stackConstructPath: s.path,
    templatePath: s.templatePath,
    accountId: undefined,
    region: undefined,
  }));
  return plugin.validate({
    templatePaths: stackTemplates.map((s) => s.templatePath),
    stackTemplates,
    appConstruct: app,
  });
}

function validate(context: Record<string, unknown>): { report: PolicyValidationPluginReport; templates: number } {
  const { app, stages } = builtApp(context);
  const assembly = app.synth();
  const stacks = assembly.stacks.map((s) => ({
    path: s.hierarchicalId,
    templatePath: join(assembly.directory, s.templateFile),
  }));
  // A nested stack's template is an asset of its parent's, not a stack of the assembly.
  const nested = stages.map(({ workflows: { operations } }) => ({
    path: operations.node.path,
    templatePath: join(assembly.directory, operations.templateFile),
  }));
  return { report: run(app, [...stacks, ...nested]), templates: stacks.length + nested.length };
}

describe("CDK's built-in CloudFormation validation", () => {
  it('finds nothing in any template (both stacks and the nested operations stack), without and with a VPC', () => {
    for (const context of [{}, VPC_CONTEXT]) {
      const { report, templates } = validate(context);
      expect(templates).toBe(3);
      expect(findings(report), JSON.stringify(context)).toEqual([]);
      expect(report.success).toBe(true);
    }
  }, 120_000);

  it('is live: a template with a property its resource type does not have is reported', () => {
    const path = join(scratch, 'broken.template.json');
    writeFileSync(
      path,
      JSON.stringify({ Resources: { Broken: { Type: 'AWS::SQS::Queue', Properties: { NotAQueueProperty: true } } } }),
    );
    const report = run(builtApp().app, [{ path: 'Broken', templatePath: path }]);
    expect(findings(report).join('\n')).toContain('Broken');
  }, 120_000);
});
