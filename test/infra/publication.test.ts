import { Template } from 'aws-cdk-lib/assertions';
import type { IConstruct } from 'constructs';
import { beforeAll, describe, expect, it } from 'vitest';
import { OBSERVE_TIMING, STEPS } from '../../src/registry/index.js';
import type { CutpointApp } from '../../infra/app.js';
import { builtApp } from './support/built-app.js';
import { QUALITY_KEY_PATTERN } from '../../infra/step-policy.js';
import { REAP_BOUND_MS, TERM_GRACE_MS } from '../../src/quality/admission.js';
import { qualityKeys } from '../../src/quality/capsule-store.js';
import { DEFAULT_RESERVE_MS } from '../../src/quality/observe-reader.js';
import { actionsOf, allowedActions, resourcesOf, roleStatements, type Statement } from './policies.js';
import { logicalId } from './support/logical-id.js';

/**
 * F4 (docs/rules.md#bounded-reader timing, docs/rules.md#authority-keys) on the synthesized
 * templates of the publication and governance side, without bundling any function (the
 * templates are what is checked; stacks.test.ts bundles).
 */
let built: CutpointApp;
let workflows: Template;

beforeAll(() => {
  built = builtApp();
  workflows = Template.fromStack(built.workflows);
}, 120_000);

const resourceOf = (construct: IConstruct) => workflows.toJSON().Resources[logicalId(construct)];
const fnResource = (placeholder: string) => resourceOf(built.workflows.functions.get(placeholder)!);
const roleOf = (placeholder: string): string => fnResource(placeholder).Properties.Role['Fn::GetAtt'][0] as string;
const machine = (flow: string) => resourceOf(built.workflows.stateMachines.get(flow)!);
const importOf = (name: string) => ({ 'Fn::ImportValue': `CutpointStateful-${name}` });

describe('publish-clickhouse and the quality steps, deployed (F4)', () => {
  it('ObserveTarget: deadline + reserve < Lambda timeout < Task TimeoutSeconds, and the reserve covers the reader end (2 × term grace + reap bound)', () => {
    const lambda = fnResource('QualityObserveTargetFunctionArn').Properties.Timeout as number;
    const task = JSON.parse(machine('publish-clickhouse').Properties.DefinitionString as string).States
      .ObserveTarget as { TimeoutSeconds: number };
    expect(OBSERVE_TIMING.deadlineSeconds + OBSERVE_TIMING.reserveSeconds).toBeLessThan(lambda);
    expect(lambda).toBeLessThan(task.TimeoutSeconds);
    // The handler keeps back the same reserve from the Lambda's remaining time.
    expect(DEFAULT_RESERVE_MS).toBe(OBSERVE_TIMING.reserveSeconds * 1000);
    expect(2 * TERM_GRACE_MS + REAP_BOUND_MS).toBeLessThan(DEFAULT_RESERVE_MS);
  });

  it('dynamodb:DescribeTable is granted only to the steps that seal, observe or check a capsule: PrepareCapsule, ObserveTarget, the operator observe, resume, the read-only replay and diagnosis, and the continuity check of begin (a successor), evidence, checkpoint and cleanup', () => {
    const describing = STEPS.filter((s) =>
      allowedActions(roleStatements(workflows, roleOf(s.placeholder)), 'dynamodb:').includes('dynamodb:DescribeTable'),
    );
    expect(describing.map((s) => s.placeholder).sort()).toEqual([
      'DeliveryBeginFunctionArn',
      'DeliveryCheckpointFunctionArn',
      'DeliveryEvidenceFunctionArn',
      'DeliveryRecoverResumeFunctionArn',
      'PublicationCleanupFunctionArn',
      'QualityDiagnoseFunctionArn',
      'QualityObserveTargetFunctionArn',
      'QualityOperatorObserveFunctionArn',
      'QualityPrepareCapsuleFunctionArn',
      'QualityReplayFunctionArn',
    ]);
  });

  it('every observing Lambda gets the observation timing: deadline + reserve < its timeout < its Task TimeoutSeconds (quality-observe, delivery-resume)', () => {
    for (const [placeholder, flow, state] of [
      ['QualityOperatorObserveFunctionArn', 'quality-observe', 'Observe'],
      ['DeliveryRecoverResumeFunctionArn', 'delivery-resume', 'Resume'],
    ] as const) {
      const lambda = fnResource(placeholder).Properties.Timeout as number;
      const task = JSON.parse(machine(flow).Properties.DefinitionString as string).States[state] as {
        TimeoutSeconds: number;
      };
      expect(OBSERVE_TIMING.deadlineSeconds + OBSERVE_TIMING.reserveSeconds, placeholder).toBeLessThan(lambda);
      expect(lambda, placeholder).toBeLessThan(task.TimeoutSeconds);
    }
  });

  it('no step may delete a quality item: none is allowed DeleteItem beyond partition keys outside quality#, and every role on the table carries a Deny of DeleteItem on the quality partition keys', () => {
    expect(qualityKeys.capsule('events_ch.pub.events', 'inv-aaaaaaaaaaaaaaaaaaaaaaaaaa').pk).toMatch(
      new RegExp(`^${QUALITY_KEY_PATTERN.replace('*', '')}`),
    );
    for (const step of STEPS) {
      const statements = roleStatements(workflows, roleOf(step.placeholder));
      // The one limited grant (stream compaction's task cleanup): DeleteItem only on its own partition keys.
      const deletes = statements.filter(
        (s: Statement & { Condition?: unknown }) =>
          s.Effect === 'Allow' && actionsOf(s).includes('dynamodb:DeleteItem'),
      );
      for (const grant of deletes as Array<Statement & { Condition?: unknown }>) {
        expect(actionsOf(grant), step.placeholder).toEqual(['dynamodb:DeleteItem']);
        const keys = (
          grant.Condition as { 'ForAllValues:StringLike'?: { 'dynamodb:LeadingKeys'?: string[] } } | undefined
        )?.['ForAllValues:StringLike']?.['dynamodb:LeadingKeys'];
        expect(keys, `${step.placeholder}: an unconditioned DeleteItem`).toBeDefined();
        expect(keys, step.placeholder).toEqual(step.deleteLeadingKeys);
        const qualityPk = qualityKeys.capsule('events_ch.pub.events', 'inv-aaaaaaaaaaaaaaaaaaaaaaaaaa').pk;
        for (const key of keys ?? [])
          expect(
            new RegExp(
              `^${key
                .split('*')
                .map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
                .join('.*')}$`,
            ).test(qualityPk),
            key,
          ).toBe(false);
      }
      if (step.table.length === 0) continue;
      const deny = statements.filter((s: Statement & { Condition?: unknown }) => s.Effect === 'Deny');
      expect(deny, step.placeholder).toEqual([
        {
          Effect: 'Deny',
          Action: 'dynamodb:DeleteItem',
          Resource: importOf('TableArn'),
          Condition: { 'ForAnyValue:StringLike': { 'dynamodb:LeadingKeys': [QUALITY_KEY_PATTERN] } },
          Sid: 'NoQualityDelete',
        },
      ]);
    }
  });

  it('the recovery dispatcher starts delivery-reconcile when publish-clickhouse ends FAILED, TIMED_OUT or ABORTED', () => {
    const rule = built.workflows.recovery.rules.get('publish-clickhouse')!;
    const target = workflows.toJSON().Resources[logicalId(rule)].Properties.Targets[0];
    const parts = target.InputTransformer.InputTemplate['Fn::Join'][1] as unknown[];
    const input = JSON.parse(
      parts
        .map((p) => (typeof p === 'string' ? p : `Ref:${(p as { Ref: string }).Ref}`))
        .join('')
        .replace(/<detail-[A-Za-z]+>/g, 'null'),
    );
    const reconcile = `Ref:${logicalId(built.workflows.stateMachines.get('delivery-reconcile')!)}`;
    expect(input.recovery).toEqual({
      by: 'delivery-reconcile',
      stateMachineArn: reconcile,
      on: ['FAILED', 'TIMED_OUT', 'ABORTED'],
    });
  });

  it('the incident: publish-clickhouse may invoke the NotifyIncident function, which may publish to the incident topic (and use its key) only', () => {
    const notify = 'DeliveryNotifyIncidentFunctionArn';
    const flowRole = machine('publish-clickhouse').Properties.RoleArn['Fn::GetAtt'][0] as string;
    const invoked = roleStatements(workflows, flowRole)
      .filter((s) => actionsOf(s).includes('lambda:InvokeFunction'))
      .flatMap(resourcesOf);
    expect(invoked).toContainEqual({ 'Fn::GetAtt': [logicalId(built.workflows.functions.get(notify)!), 'Arn'] });
    const statements = roleStatements(workflows, roleOf(notify));
    const sns = statements.filter((s) => s.Effect === 'Allow' && actionsOf(s).some((a) => a.startsWith('sns:')));
    expect(sns.map((s) => [actionsOf(s), resourcesOf(s)])).toEqual([[['sns:Publish'], [importOf('IncidentTopicArn')]]]);
    // Only the notifying step publishes.
    const publishers = STEPS.filter(
      (s) => allowedActions(roleStatements(workflows, roleOf(s.placeholder)), 'sns:').length > 0,
    ).map((s) => s.placeholder);
    expect(publishers).toEqual([notify]);
  });
});
