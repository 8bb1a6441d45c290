/**
 * A stage: one deployed copy of cutpoint (its two stacks and everything they name) in an
 * account and region. Every physical name derives from the stage's stack names, so two
 * stages live side by side in one account. The default stage (no name) keeps the names of
 * the first release: CutpointStateful and CutpointWorkflows. Pure: the CDK app
 * (infra/cutpoint-stage.ts) and the CLI's `--stage` (src/cli/aws-settings.ts) share it.
 */

/** Lowercase letters and digits, a letter first, at most 12: it lands in state machine names (80 characters). */
export const STAGE_NAME = /^[a-z][a-z0-9]{0,11}$/;

/** The configuration's key for the unnamed stage (cutpoint.config.json). */
export const DEFAULT_STAGE = 'default';

export interface StageStackNames {
  stateful: string;
  workflows: string;
}

/** `undefined` or `default`: CutpointStateful, CutpointWorkflows; `prod`: CutpointStateful-prod, CutpointWorkflows-prod. */
export function stackNamesOf(stage: string | undefined): StageStackNames {
  const suffix = stage === undefined || stage === DEFAULT_STAGE ? '' : `-${stage}`;
  return { stateful: `CutpointStateful${suffix}`, workflows: `CutpointWorkflows${suffix}` };
}

/**
 * Where the routes' connection secrets live unless the stage names others (read by the
 * delivery steps): `cutpoint/delivery/` for the default stage, `cutpoint/<stage>/delivery/`
 * for a named one; `source/` and `target/` below it.
 */
export function secretPrefixOf(stage: string | undefined): string {
  return stage === undefined || stage === DEFAULT_STAGE ? 'cutpoint/delivery/' : `cutpoint/${stage}/delivery/`;
}
