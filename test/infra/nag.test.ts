import { Annotations, Match } from 'aws-cdk-lib/assertions';
import { Validations } from 'aws-cdk-lib';
import type { PolicyValidationPluginReport } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { beforeAll, describe, expect, it } from 'vitest';
import type { CutpointApp } from '../../infra/app.js';
import { builtApp } from './support/built-app.js';

// cdk-nag 3 runs as a CDK validation plugin (Validations.of(app).addPlugins), not as an
// Aspect writing annotations, and acknowledgements are Validations.of(x).acknowledge().
// One build for the file; the app's own plugin runs during synth. The rules read the
// templates only, so the Lambda code is not bundled here (test/infra/stacks.test.ts does).
let built: CutpointApp;

beforeAll(() => {
  built = builtApp();
  built.app.synth();
});

function describeViolations(report: PolicyValidationPluginReport): string {
  return report.violations
    .flatMap((v) =>
      v.violatingResources.map((r) => `${v.ruleName} (${v.severity}) at ${r.constructPath ?? r.resourceLogicalId}`),
    )
    .join('\n');
}

/** Every acknowledgement recorded in the tree: [construct path, rule id]. */
function acknowledgements(root: IConstruct): Array<[string, string]> {
  return root.node
    .findAll()
    .flatMap((c) =>
      c.node.metadata
        .filter((m) => m.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
        .flatMap((m) =>
          Object.keys(m.data as object).map((id): [string, string] => [c.node.path, id.replace(/^annotation::/i, '')]),
        ),
    );
}

describe('cdk-nag AwsSolutions', () => {
  it('synthesis leaves no unacknowledged error or warning', () => {
    const report = new AwsSolutionsChecks(built.app, { verbose: true }).validateScope(built.app);
    expect(report.violations, `unacknowledged findings:\n${describeViolations(report)}`).toEqual([]);
  });

  it("puts no AwsSolutions (or any other) error or warning annotation on either stack (the workflows stack's include its nested operations stack's)", () => {
    for (const stack of [built.stateful, built.workflows]) {
      const annotations = Annotations.fromStack(stack);
      const found = [
        ...annotations.findError('*', Match.stringLikeRegexp('AwsSolutions-.*')),
        ...annotations.findWarning('*', Match.stringLikeRegexp('AwsSolutions-.*')),
        ...annotations.findError('*', Match.anyValue()),
        ...annotations.findWarning('*', Match.anyValue()),
      ];
      expect(found, found.map((a) => `${a.id}: ${String(a.entry.data)}`).join('\n')).toEqual([]);
    }
  });

  it('acknowledges only findings that exist (no stale acknowledgement)', () => {
    // The same pack with acknowledgements ignored: its findings are everything raised.
    const raw = new AwsSolutionsChecks(built.app);
    (raw as unknown as { isAcknowledged: () => boolean }).isAcknowledged = () => false;
    const findings = raw
      .validateScope(built.app)
      .violations.flatMap((v) => v.violatingResources.map((r) => ({ rule: v.ruleName, path: r.constructPath ?? '' })));
    const acks = acknowledgements(built.app);
    expect(acks.length).toBeGreaterThan(0);
    const stale = acks.filter(
      ([path, id]) => !findings.some((f) => f.rule === id && (f.path === path || f.path.startsWith(`${path}/`))),
    );
    expect(stale, `acknowledged but never raised:\n${stale.map(([p, id]) => `${id} at ${p}`).join('\n')}`).toEqual([]);
  });
});
