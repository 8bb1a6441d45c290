import { readFileSync } from 'node:fs';
import { Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildApp, cdkJsonContext, type CutpointApp } from '../../infra/app.js';
import {
  parseStageConfig,
  readStageConfig,
  SETTINGS,
  stagesOf,
  type StageConfigFile,
  type StageSettings,
} from '../../infra/stage-config.js';
import { repoPath } from '../../infra/repo.js';
import { ConfigError } from '../../src/domain/errors.js';
import { FAULTS_IN_LAMBDA_ENV } from '../../src/domain/faults.js';
import { STEPS } from '../../src/registry/index.js';
import { VPC_CONTEXT } from './support/built-app.js';

// Stages (infra/cutpoint-stage.ts) and the committed deploy settings (cutpoint.config.json,
// infra/stage-config.ts). Templates only: no Lambda bundling, no CloudFormation validation.
const build = (config: StageConfigFile, context: Record<string, unknown> = {}) => {
  const built = buildApp({ bundle: false, cloudFormationValidation: false, config, context });
  built.app.synth();
  return built;
};
const templateOf = (stack: Stack) => Template.fromStack(stack).toJSON() as CfnTemplate;

interface CfnTemplate {
  Resources: Record<string, { Type: string; Properties?: Record<string, unknown> }>;
  Outputs?: Record<string, { Export?: { Name: unknown } }>;
}

/**
 * Every explicit physical name of a template: its stack's name (none for a nested stack:
 * CloudFormation generates it), top-level properties named *Name (not metric or key
 * attributes), and export names.
 */
function physicalNames(stackName: string | undefined, template: CfnTemplate): string[] {
  // Not account-wide names: attributes, labels, a policy's name within its role; and a value
  // that refers to a resource of the same template names nothing itself.
  const notNames = new Set(['MetricName', 'AttributeName', 'DisplayName', 'KeyName', 'ServiceName', 'PolicyName']);
  const local = (value: unknown) => /"Fn::GetAtt"|"Ref":"(?!AWS::)/.test(JSON.stringify(value));
  const names = Object.entries(template.Resources).flatMap(([, resource]) =>
    Object.entries(resource.Properties ?? {})
      .filter(([key, value]) => key.endsWith('Name') && !notNames.has(key) && !local(value))
      .map(([key, value]) => `${resource.Type}.${key}=${JSON.stringify(value)}`),
  );
  const exports = Object.values(template.Outputs ?? {}).flatMap((o) =>
    o.Export ? [`Export=${JSON.stringify(o.Export.Name)}`] : [],
  );
  return [...(stackName === undefined ? [] : [`Stack=${stackName}`]), ...names, ...exports];
}

const FULL: StageSettings = {
  vpcId: VPC_CONTEXT['cutpoint:vpcId'],
  subnetIds: VPC_CONTEXT['cutpoint:subnetIds'].split(','),
  securityGroupIds: VPC_CONTEXT['cutpoint:securityGroupIds'].split(','),
  routeTableIds: VPC_CONTEXT['cutpoint:routeTableIds'].split(','),
  maintenanceLanes: ['logs:0', 'logs:1'],
  maintenanceRateMinutes: 15,
  gcGrace: '6h',
  chunkRetentionDays: 30,
  recoveryBackoff: { attempts: 5, firstWaitSeconds: 10, maxWaitSeconds: 120, totalSeconds: 1800 },
  runbookBaseUrl: 'https://runbooks.example.com/cutpoint/',
  alarmEmails: ['oncall@example.com'],
};

describe('two stages in one app', () => {
  let built: CutpointApp;
  beforeAll(() => {
    built = build({
      stages: { default: {}, staging: { maintenanceLanes: 'logs:0', removalPolicy: 'destroy', gamedayFaults: true } },
    });
  }, 600_000);

  it('a throwaway stage (removalPolicy destroy) empties and deletes its buckets on delete; the default keeps them, protected', () => {
    const [kept, throwaway] = built.stages.map((s) => templateOf(s.stateful));
    const autoDeletes = (t: CfnTemplate) =>
      Object.values(t.Resources).filter((r) => r.Type === 'Custom::S3AutoDeleteObjects').length;
    const buckets = (t: CfnTemplate) =>
      Object.entries(Template.fromJSON(t).findResources('AWS::S3::Bucket')).map(([, r]) => r.DeletionPolicy as string);
    expect([autoDeletes(kept!), autoDeletes(throwaway!)]).toEqual([0, 2]);
    expect(buckets(kept!)).toEqual(['Retain', 'Retain']);
    expect(buckets(throwaway!)).toEqual(['Delete', 'Delete']);
    expect(built.stages.map((s) => s.stateful.terminationProtection)).toEqual([true, false]);
  });

  it('a game day stage (gamedayFaults) lets every step Lambda arm CUTPOINT_FAULTS; the default lets none', () => {
    const armable = (t: CfnTemplate) =>
      Object.values(Template.fromJSON(t).findResources('AWS::Lambda::Function')).map(
        (r) =>
          (r.Properties as { Environment?: { Variables?: Record<string, unknown> } }).Environment?.Variables?.[
            FAULTS_IN_LAMBDA_ENV
          ],
      );
    const [kept, gameday] = built.stages.map((s) => armable(templateOf(s.workflows)));
    expect(new Set(kept)).toEqual(new Set([undefined]));
    expect(gameday!.filter((v) => v === 'enabled')).toHaveLength(STEPS.length);
  });

  it('the default stage keeps its names; the other derives every name from its own', () => {
    expect(built.stages.map((s) => [s.stateful.stackName, s.workflows.stackName])).toEqual([
      ['CutpointStateful', 'CutpointWorkflows'],
      ['CutpointStateful-staging', 'CutpointWorkflows-staging'],
    ]);
    expect(built.stages.map((s) => s.node.path)).toEqual(['Cutpoint', 'Cutpoint-staging']);
  });

  it('no physical name (stack, state machine, log group, alarm, dashboard, export, …) is used twice', () => {
    const all = built.stages.flatMap((s) =>
      [s.stateful, s.workflows, s.workflows.operations].flatMap((stack) =>
        physicalNames(stack.nestedStackResource ? undefined : stack.stackName, templateOf(stack)),
      ),
    );
    const repeated = all.filter((n, i) => all.indexOf(n) !== i);
    expect(repeated).toEqual([]);
    const kinds = new Set(all.map((n) => n.split('=')[0]));
    for (const kind of [
      'Stack',
      'Export',
      'AWS::StepFunctions::StateMachine.StateMachineName',
      'AWS::Logs::LogGroup.LogGroupName',
      'AWS::CloudWatch::Alarm.AlarmName',
      'AWS::CloudWatch::Dashboard.DashboardName',
    ])
      expect(kinds, kind).toContain(kind);
  });

  it("each stage's steps read the secrets under its own prefix", () => {
    const text = (stack: Stack) => JSON.stringify(templateOf(stack));
    const [main, staging] = built.stages;
    expect(text(main!.workflows)).toContain(':secret:cutpoint/delivery/source/*');
    expect(text(staging!.workflows)).toContain(':secret:cutpoint/staging/delivery/source/*');
    expect(text(staging!.workflows)).not.toContain(':secret:cutpoint/delivery/');
  });
});

describe('deploy settings that persist (cutpoint.config.json)', () => {
  // The default stage and a second one, both in the fullest shape.
  let fromFile: CutpointApp;
  beforeAll(() => {
    fromFile = build({ stages: { default: FULL, staging: FULL } });
  }, 600_000);

  it('the app reads the committed file: one default stage', () => {
    expect(readStageConfig()).toEqual(
      parseStageConfig(JSON.parse(readFileSync(repoPath('cutpoint.config.json'), 'utf8'))),
    );
    expect(Object.keys(readStageConfig().stages)).toContain('default');
  });

  it('a redeploy with no flags synthesizes what the same settings given as -c flags do', () => {
    const context = Object.fromEntries(Object.entries(FULL).map(([key, value]) => [`cutpoint:${key}`, value]));
    const fromFlags = build({ stages: { default: {} } }, context);
    for (const which of ['stateful', 'workflows'] as const)
      expect(templateOf(fromFile[which]), which).toEqual(templateOf(fromFlags[which]));
    // And the settings took effect: the schedule, the VPC, the subscription.
    const workflows = JSON.stringify(templateOf(fromFile.workflows));
    expect(workflows).toContain('rate(15 minutes)');
    expect(workflows).toContain(VPC_CONTEXT['cutpoint:vpcId']);
    expect(JSON.stringify(templateOf(fromFile.stateful))).toContain('oncall@example.com');
    expect(workflows).toContain('{\\"retentionDays\\":30}');
    expect(workflows).toContain('CUTPOINT_RECOVERY_BACKOFF');
    // The runbook base: on the functions (outputs, notices) and in every alarm text that names a page.
    expect(workflows).toContain('"CUTPOINT_RUNBOOK_BASE_URL":"https://runbooks.example.com/cutpoint"');
    const operations = fromFile.stages[0]!.workflows.operations;
    const texts = Object.values(templateOf(operations).Resources)
      .filter((r) => r.Type === 'AWS::CloudWatch::Alarm')
      .map((r) => String(r.Properties?.AlarmDescription));
    const naming = texts.filter((t) => t.includes('<STATE>.md') || t.includes('Runbook:'));
    expect(naming.length).toBeGreaterThan(10);
    for (const t of naming) expect(t).toContain('https://runbooks.example.com/cutpoint/');
    for (const t of texts) expect(t).not.toContain('docs/runbook/');
  });

  it("resources per template in the fullest shape, of either stage: each stack and each nested stack under 80 % of CloudFormation's 500", () => {
    const counts = fromFile.stages.flatMap((stage) =>
      stage.node
        .findAll()
        .filter((c): c is Stack => Stack.isStack(c))
        .map((stack) => [stack.node.path, Object.keys(templateOf(stack).Resources).length] as const),
    );
    // On 7 December 2026 (with quality-replay and quality-diagnose): 11 (stateful), 315
    // (workflows: roles and policies, log groups, 49 functions…) and 152 (its nested
    // operations stack: the alarms and the dashboard).
    expect(counts.map(([path]) => path)).toEqual(
      ['Cutpoint', 'Cutpoint-staging'].flatMap((id) => [
        `${id}/Stateful`,
        `${id}/Workflows`,
        `${id}/Workflows/Operations`,
      ]),
    );
    for (const [path, count] of counts) expect(count, path).toBeLessThan(400);
  });

  it('every setting is one a -c flag may override', () => {
    expect(SETTINGS).toEqual(expect.arrayContaining(Object.keys(FULL)));
  });
});

describe('the settings loader refuses with a stable code', () => {
  const codeOf = (run: () => unknown): string => {
    try {
      run();
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      return (error as ConfigError).code;
    }
    throw new Error('expected a ConfigError');
  };
  const none = () => undefined;
  const ctx = (values: Record<string, unknown>) => (key: string) => values[key];

  it.each([
    ['an unknown setting', { stages: { default: { vpcID: 'vpc-01234567' } } }, 'infra.config_invalid'],
    ['no stage', { stages: {} }, 'infra.config_invalid'],
    ['a setting of the wrong type', { stages: { default: { maintenanceLanes: 3 } } }, 'infra.config_invalid'],
    ['a bad stage name', { stages: { Prod: {} } }, 'infra.stage_invalid'],
    ['a removal policy that is neither', { stages: { default: { removalPolicy: 'keep' } } }, 'infra.config_invalid'],
  ])('%s', (_case, value, code) => {
    expect(codeOf(() => parseStageConfig(value))).toBe(code);
  });

  it('a -c override with several stages, an unknown -c cutpoint:stage, a bad value under its reader code', () => {
    const two = parseStageConfig({ stages: { default: {}, staging: {} } });
    expect(codeOf(() => stagesOf(two, ctx({ 'cutpoint:gcGrace': '6h' })))).toBe('infra.context_ambiguous');
    expect(codeOf(() => stagesOf(two, ctx({ 'cutpoint:stage': 'prod' })))).toBe('infra.stage_unknown');
    expect(stagesOf(two, ctx({ 'cutpoint:stage': 'staging', 'cutpoint:gcGrace': '6h' }))).toEqual([
      { stage: 'staging', gcGrace: '6h' },
    ]);
    const one = parseStageConfig({ stages: { default: { gcGrace: '6 hours' } } });
    expect(codeOf(() => stagesOf(one, none))).toBe('infra.gc_grace_invalid');
    expect(codeOf(() => stagesOf(two, ctx({ 'cutpoint:stage': 'staging', 'cutpoint:secretPrefix': 'no-slash' })))).toBe(
      'infra.secret_prefix_invalid',
    );
    expect(codeOf(() => stagesOf(parseStageConfig({ stages: { default: { alarmEmails: 'x' } } }), none))).toBe(
      'infra.alarm_emails_invalid',
    );
  });
});

describe('CDK feature flags', () => {
  it('cdk.json pins every recommended flag of the installed aws-cdk-lib, at its recommended value but for the deliberate ones', () => {
    const recommended = JSON.parse(
      readFileSync(repoPath('node_modules/aws-cdk-lib/recommended-feature-flags.json'), 'utf8'),
    ) as Record<string, unknown>;
    // Deliberate: the functions' runtime is the one src/registry/ names, not whatever is newest at synth.
    const deliberate = { '@aws-cdk/aws-lambda-nodejs:useLatestRuntimeVersion': false };
    expect(cdkJsonContext()).toEqual({ ...recommended, ...deliberate });
  });
});
