import type { Template } from 'aws-cdk-lib/assertions';

/** One IAM statement as it appears in a synthesized template. */
export interface Statement {
  Effect: 'Allow' | 'Deny';
  Action: string | string[];
  Resource: unknown;
}

/** Every statement granted to a role: its inline policies and the AWS::IAM::Policy resources attached to it. */
export function roleStatements(template: Template, roleLogicalId: string): Statement[] {
  const role = template.toJSON().Resources[roleLogicalId] as {
    Properties: { Policies?: Array<{ PolicyDocument: { Statement: Statement[] } }> };
  };
  const inline = (role.Properties.Policies ?? []).flatMap((p) => p.PolicyDocument.Statement);
  const attached = Object.values(template.findResources('AWS::IAM::Policy'))
    .filter((p) =>
      (p.Properties.Roles as unknown[]).some((r) => JSON.stringify(r) === JSON.stringify({ Ref: roleLogicalId })),
    )
    .flatMap((p) => p.Properties.PolicyDocument.Statement as Statement[]);
  return [...inline, ...attached];
}

/**
 * A statement's actions or resources are sets: their order in the template is CDK's (the
 * pinned @aws-cdk/aws-iam:minimizePolicies flag sorts them), so they are compared in one
 * canonical order, the expected lists too (`unordered`).
 */
export function unordered<T>(items: readonly T[]): T[] {
  return [...items].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
}

export function actionsOf(statement: Statement): string[] {
  return unordered(Array.isArray(statement.Action) ? statement.Action : [statement.Action]);
}

export function resourcesOf(statement: Statement): unknown[] {
  return unordered(Array.isArray(statement.Resource) ? statement.Resource : [statement.Resource]);
}

/** Allowed actions with a given service prefix (e.g. `dynamodb:`), sorted. */
export function allowedActions(statements: Statement[], prefix: string): string[] {
  return statements
    .filter((s) => s.Effect === 'Allow')
    .flatMap(actionsOf)
    .filter((a) => a.startsWith(prefix))
    .sort();
}
