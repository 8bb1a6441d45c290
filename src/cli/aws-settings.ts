import { quoted } from '../domain/echo.js';
import { CutpointError } from '../domain/errors.js';
import { stackNamesOf, STAGE_NAME } from '../domain/stage.js';
import { UsageError } from './io.js';

/**
 * Pure rules of `--aws` (no I/O; the lookups are in aws-runtime.ts): which stacks, which
 * region, and where each name the CLI needs comes from. Precedence, for every value:
 * flag > environment variable > the deployed stacks' outputs.
 */

/** The stacks of the default stage (src/domain/stage.ts): the authority table and bucket, then the workflows. */
export const DEFAULT_STACKS: readonly string[] = Object.values(stackNamesOf(undefined));

/** The stateful stack's outputs (infra/stateful-stack.ts) the CLI reads. */
export const TABLE_OUTPUT = 'TableName';
export const BUCKET_OUTPUT = 'BucketName';

/** deliver-window → DeliverWindowStateMachineArn (the workflows stack's CfnOutput per flow). */
export function outputOfFlow(flow: string): string {
  return `${flow.replace(/(^|-)([a-z0-9])/g, (_m, _dash: string, c: string) => c.toUpperCase())}StateMachineArn`;
}

/** stream-append → CUTPOINT_STREAM_APPEND_ARN */
export function arnVariable(flow: string): string {
  return `CUTPOINT_${flow.toUpperCase().replace(/[^A-Z0-9]/g, '_')}_ARN`;
}

const STACK_NAME = /^[A-Za-z][A-Za-z0-9-]{0,127}$/;

/**
 * `--stack A,B` (comma-separated, in lookup order), or `--stage NAME` (that stage's two
 * stacks, src/domain/stage.ts); neither: DEFAULT_STACKS. A bad name, or both, is a usage error.
 */
export function stacksOf(flag: string | undefined, stage?: string): string[] {
  if (stage !== undefined) {
    if (flag !== undefined) throw new UsageError('--stack and --stage name the stacks twice: give one');
    if (!STAGE_NAME.test(stage))
      throw new UsageError(
        `--stage takes a stage name (lowercase letters and digits, a letter first, at most 12): ${quoted(stage)}`,
      );
    return Object.values(stackNamesOf(stage));
  }
  if (flag === undefined) return [...DEFAULT_STACKS];
  const names = flag.split(',').map((s) => s.trim());
  for (const name of names) {
    if (!STACK_NAME.test(name))
      throw new UsageError(
        `--stack takes CloudFormation stack names, comma-separated (letters, digits, hyphens; a letter first): ${quoted(name)}`,
      );
  }
  if (new Set(names).size !== names.length) throw new UsageError('--stack names a stack twice');
  return names;
}

/** The stack named does not exist in this account and region. */
export class StackNotFoundError extends CutpointError {
  constructor(stack: string, region: string) {
    super(
      'Aws.StackNotFound',
      'aws.stack_not_found',
      `stack ${stack} does not exist in ${region} (deploy it with \`npx cdk deploy --all\`, or name yours with --stack, or pass --region/--profile)`,
    );
  }
}

/** The stacks exist but none has the output the command needs. */
export class OutputMissingError extends CutpointError {
  constructor(output: string, stacks: readonly string[], override: string) {
    super(
      'Aws.OutputMissing',
      'aws.output_missing',
      `no stack output ${output} in ${stacks.join(', ')} (redeploy the stacks, or set ${override})`,
    );
  }
}

/** Outputs of several stacks merged; the same key with two values is ambiguous, not last-wins. */
export function mergeOutputs(
  stacks: ReadonlyArray<{ name: string; outputs: Record<string, string> }>,
): Record<string, string> {
  const merged: Record<string, string> = {};
  const from: Record<string, string> = {};
  for (const stack of stacks) {
    for (const [key, value] of Object.entries(stack.outputs)) {
      if (key in merged && merged[key] !== value) {
        throw new CutpointError(
          'Aws.OutputAmbiguous',
          'aws.output_ambiguous',
          `stack output ${key} differs between ${from[key]} and ${stack.name}; name one stack with --stack`,
        );
      }
      merged[key] = value;
      from[key] ??= stack.name;
    }
  }
  return merged;
}

/** A value by precedence: the flag, then the variable, then (undefined: not looked up yet) the output. */
export function pick(flag: string | undefined, env: NodeJS.ProcessEnv, variable: string): string | undefined {
  if (flag !== undefined) return flag;
  const value = env[variable]?.trim();
  return value ? value : undefined;
}

/** From the merged outputs: the value, or aws.output_missing naming the output and the variable that overrides it. */
export function fromOutputs(
  outputs: Record<string, string>,
  output: string,
  stacks: readonly string[],
  override: string,
): string {
  const value = outputs[output];
  if (value === undefined || value === '') throw new OutputMissingError(output, stacks, override);
  return value;
}

const PROFILE_NAME =
  // eslint-disable-next-line no-control-regex
  /^[^\s[\]\u0000-\u001f\u007f-\u009f](?:[^[\]\u0000-\u001f\u007f-\u009f]{0,126}[^\s[\]\u0000-\u001f\u007f-\u009f])?$/;

/**
 * `--profile NAME` as a shared-config section can hold it: 1-128 characters, no control
 * character, no bracket, no space at either end (inner spaces are allowed, as the AWS CLI
 * writes `[profile ops team]`). A malformed name is a usage error before any lookup.
 */
export function assertProfileFlag(flag: string | undefined): void {
  if (flag !== undefined && !PROFILE_NAME.test(flag))
    throw new UsageError(
      '--profile takes a shared-config profile name (1-128 characters; no control character, bracket, or space at either end)',
    );
}

/** The profile a command uses: --profile, then AWS_PROFILE, then `default`. */
export function profileOf(flag: string | undefined, env: NodeJS.ProcessEnv): { name: string; named: boolean } {
  if (flag !== undefined) return { name: flag, named: true };
  const fromEnv = env.AWS_PROFILE?.trim();
  return fromEnv ? { name: fromEnv, named: true } : { name: 'default', named: false };
}

/**
 * The ONE region of a command: --region, then AWS_REGION, then AWS_DEFAULT_REGION, then
 * the profile's region (looked up only when needed, by the SDK's own config loader:
 * src/adapters/aws-shared-config.ts); none of them is `aws.region_missing` (never a silent default).
 */
export async function regionOf(
  flag: string | undefined,
  env: NodeJS.ProcessEnv,
  profileRegion: () => Promise<string | undefined>,
  profile: string,
): Promise<{ region: string; from: string }> {
  if (flag !== undefined) return { region: flag, from: '--region' };
  for (const variable of ['AWS_REGION', 'AWS_DEFAULT_REGION']) {
    const value = env[variable]?.trim();
    if (value) return { region: value, from: variable };
  }
  const fromProfile = await profileRegion();
  if (fromProfile) return { region: fromProfile, from: `profile ${profile}` };
  throw new CutpointError(
    'Aws.RegionMissing',
    'aws.region_missing',
    `no region: pass --region, set AWS_REGION, or set region in profile ${profile} of the shared config file`,
  );
}
