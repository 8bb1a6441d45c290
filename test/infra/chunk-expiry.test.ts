import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import type { CutpointApp } from '../../infra/app.js';
import { readStageConfig } from '../../infra/stage-config.js';
import { builtApp } from './support/built-app.js';
import { actionsOf, resourcesOf, roleStatements } from './policies.js';
import { logicalId } from './support/logical-id.js';

/**
 * Chunk retention on AWS (docs/delivery.md "Chunk retention"): every stage has an hourly schedule
 * starting delivery-expire with its committed chunkRetentionDays, and the expiry Lambda may
 * delete only work objects (never evidence) and only released-index items.
 */
let plain: CutpointApp;
let overridden: CutpointApp;

beforeAll(() => {
  plain = builtApp();
  overridden = builtApp({ 'cutpoint:chunkRetentionDays': '30' });
}, 180_000);

function scheduleOf(app: CutpointApp) {
  const template = Template.fromStack(app.workflows);
  const rule = template.toJSON().Resources[logicalId(app.workflows.chunkExpiry.rule)].Properties;
  return { template, rule };
}

describe('chunk expiry on AWS', () => {
  it('an hourly schedule starts delivery-expire with the stage’s committed retention', () => {
    const committed = readStageConfig().stages.default?.chunkRetentionDays;
    expect(committed).toBe(7);
    const { rule } = scheduleOf(plain);
    expect(rule.ScheduleExpression).toBe('rate(1 hour)');
    expect(rule.Targets[0].Arn).toEqual({ Ref: logicalId(plain.workflows.stateMachines.get('delivery-expire')!) });
    expect(JSON.parse(rule.Targets[0].Input as string)).toEqual({ retentionDays: committed });
    const queue = logicalId(plain.workflows.chunkExpiry.deadLetters.queue);
    expect(rule.Targets[0].DeadLetterConfig).toEqual({ Arn: { 'Fn::GetAtt': [queue, 'Arn'] } });
  });

  it('-c cutpoint:chunkRetentionDays overrides it for one deploy; a bad value fails the synth', () => {
    expect(JSON.parse(scheduleOf(overridden).rule.Targets[0].Input as string)).toEqual({ retentionDays: 30 });
    for (const bad of ['0', '3651', '7.5', 'week'])
      expect(() => builtApp({ 'cutpoint:chunkRetentionDays': bad })).toThrow(
        /chunkRetentionDays must be a whole number/,
      );
  });

  it('the expiry Lambda deletes only work objects and only released-index items', () => {
    const { template } = scheduleOf(plain);
    const fn = plain.workflows.functions.get('DeliveryExpireFunctionArn')!;
    const role = template.toJSON().Resources[logicalId(fn)].Properties.Role['Fn::GetAtt'][0] as string;
    const statements = roleStatements(template, role);
    const deletes = statements.filter((s) => actionsOf(s).includes('s3:DeleteObject'));
    expect(deletes.flatMap(actionsOf)).toEqual(['s3:DeleteObject']);
    const keys = deletes.flatMap(resourcesOf).map((r) => JSON.stringify(r));
    expect(keys.map((k) => /\/delivery\/[^"]*/.exec(k)?.[0]).sort()).toEqual([
      '/delivery/*/chunk-*',
      '/delivery/*/map-results/*',
      '/delivery/*/plan.json*',
    ]);
    expect(keys.join()).not.toContain('evidence');
    const itemDeletes = statements.filter((s) => s.Effect === 'Allow' && actionsOf(s).includes('dynamodb:DeleteItem'));
    expect(itemDeletes.map((s) => (s as { Condition?: unknown }).Condition)).toEqual([
      { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['delivery#released'] } },
    ]);
  });
});
