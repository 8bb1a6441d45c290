import { Stack, Validations } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';
import { flattenCfnReference } from 'cdk-nag/lib/utils/flatten-cfn-reference.js';

/**
 * Acknowledges one AwsSolutions-IAM5 wildcard finding for `resource` on `scope` (and the
 * policies under it). cdk-nag 3 has no `appliesTo`: a finding is acknowledged by its full
 * id, `AwsSolutions-IAM5[Resource::<flattened resource>]`, so the id is computed with
 * cdk-nag's own flattening; if an upgrade changes it, test/infra/nag.test.ts fails.
 */
export function acknowledgeWildcardResource(scope: IConstruct, resource: string, reason: string): void {
  const flattened = flattenCfnReference(Stack.of(scope).resolve(resource));
  Validations.of(scope).acknowledge({ id: `AwsSolutions-IAM5[Resource::${flattened}]`, reason });
}
