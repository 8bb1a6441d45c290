import { homedir } from 'node:os';
import { join } from 'node:path';
import { assertRegion, awsConfig, type AwsConnection, type CutpointConfig } from '../config.js';
import {
  arnVariable,
  assertProfileFlag,
  BUCKET_OUTPUT,
  fromOutputs,
  mergeOutputs,
  outputOfFlow,
  pick,
  profileOf,
  regionOf,
  StackNotFoundError,
  stacksOf,
  TABLE_OUTPUT,
} from './aws-settings.js';
import { INPUT_LIMITS, UsageError } from './io.js';
import { readRegularFileSync } from './input.js';
import type { SharedConfigPaths } from '../adapters/aws-shared-config.js';

/**
 * The options of `--aws`, one table spread into every command that has it, so the help
 * and the parser name them once:
 * - `--profile NAME`: credentials (and, failing --region/AWS_REGION, the region) of that
 *   shared-config profile;
 * - `--region R`: the one region of every client of the command;
 * - `--stack A[,B]`: the deployed stacks whose outputs name the table, the bucket and every
 *   state machine (default CutpointStateful,CutpointWorkflows);
 * - `--stage NAME`: the two stacks of that stage (CutpointStateful-NAME, CutpointWorkflows-NAME).
 */
export const AWS_OPTIONS = {
  aws: { type: 'boolean' },
  profile: { type: 'string' },
  region: { type: 'string' },
  stack: { type: 'string' },
  stage: { type: 'string' },
} as const;

/** The options' help, once, for every command that spreads AWS_OPTIONS. */
export const AWS_HELP = `--aws acts on the deployed system; with it:
  --profile NAME  credentials of that shared-config profile (else AWS_PROFILE, else the default chain)
  --region R      the one region of every client (else AWS_REGION, AWS_DEFAULT_REGION, the profile's region)
  --stack A[,B]   stacks whose outputs name the table, bucket and state machines
                  (default CutpointStateful,CutpointWorkflows); a flag or variable
                  (--state-machine-arn, CUTPOINT_<FLOW>_ARN, CUTPOINT_TABLE_NAME,
                  CUTPOINT_BUCKET_NAME) wins over an output
  --stage NAME    the stacks of that stage (CutpointStateful-NAME,CutpointWorkflows-NAME)`;

export interface AwsFlags {
  aws?: boolean;
  profile?: string;
  region?: string;
  stack?: string;
  stage?: string;
}

/** --profile, --region, --stack and --stage mean nothing without --aws: a usage error, before anything runs. */
export function refuseAwsFlagsWithoutAws(flags: AwsFlags): void {
  if (flags.aws) return;
  const given = (['profile', 'region', 'stack', 'stage'] as const).filter((f) => flags[f] !== undefined);
  if (given.length)
    throw new UsageError(`${given.map((f) => `--${f}`).join(' and ')} need${given.length === 1 ? 's' : ''} --aws`);
}

/**
 * One command's view of the deployed system. The region is resolved ONCE (--region >
 * AWS_REGION > AWS_DEFAULT_REGION > the profile's region) and every SDK client of the
 * command is built with it. Names come by precedence flag > environment variable > stack
 * outputs; the stacks are described (DescribeStacks, once per command) only when a name is
 * not given otherwise.
 */
export class AwsSession {
  private readonly stacks: string[];
  private resolvedConnection: Promise<AwsConnection> | undefined;
  private outputs: Promise<Record<string, string>> | undefined;

  constructor(
    private readonly flags: AwsFlags,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {
    // Grammar first (exit 2): a bad --stack, --stage or --profile is refused before any lookup.
    this.stacks = stacksOf(flags.stack, flags.stage);
    assertProfileFlag(flags.profile);
  }

  /**
   * The region and profile every client of this command uses. The shared config and
   * credentials files are checked first, whatever the region comes from: the SDK reads them
   * too, and a FIFO there would hang it, `/dev/zero` exhaust its memory
   * (`cli.file_not_regular`, `cli.input_too_large`, naming the variable). The profile's
   * region, when it is the one needed, is read by the SDK's own loader
   * (src/adapters/aws-shared-config.ts).
   */
  connection(): Promise<AwsConnection> {
    this.resolvedConnection ??= this.resolveConnection();
    return this.resolvedConnection;
  }

  private async resolveConnection(): Promise<AwsConnection> {
    const paths = this.sharedFiles();
    const profile = profileOf(this.flags.profile, this.env);
    const { region } = await regionOf(
      this.flags.region,
      this.env,
      async () => (await import('../adapters/aws-shared-config.js')).profileRegion(profile.name, paths),
      profile.name,
    );
    assertRegion(region);
    // An operator's connection: a call that never reaches AWS is aws.unreachable with the next step.
    return { region, ...(profile.named ? { profile: profile.name } : {}), operator: true };
  }

  /** The stacks this command acts on (--stack, --stage, or the default two). */
  stackNames(): readonly string[] {
    return this.stacks;
  }

  /** The authority table and object bucket: CUTPOINT_TABLE_NAME / CUTPOINT_BUCKET_NAME, else the stateful stack's outputs. */
  async config(): Promise<CutpointConfig> {
    const connection = await this.connection();
    const table = pick(undefined, this.env, 'CUTPOINT_TABLE_NAME');
    const bucket = pick(undefined, this.env, 'CUTPOINT_BUCKET_NAME');
    const outputs = table !== undefined && bucket !== undefined ? {} : await this.stackOutputs();
    return awsConfig(
      {
        tableName: table ?? fromOutputs(outputs, TABLE_OUTPUT, this.stacks, 'CUTPOINT_TABLE_NAME'),
        bucketName: bucket ?? fromOutputs(outputs, BUCKET_OUTPUT, this.stacks, 'CUTPOINT_BUCKET_NAME'),
        ...connection,
      },
      this.env,
    );
  }

  /** A flow's state machine: --state-machine-arn, else CUTPOINT_<FLOW>_ARN, else the output <Flow>StateMachineArn. */
  async stateMachineArn(flow: string, flag?: string): Promise<string> {
    await this.connection();
    const given = pick(flag, this.env, arnVariable(flow));
    if (given !== undefined) return given;
    return fromOutputs(
      await this.stackOutputs(),
      outputOfFlow(flow),
      this.stacks,
      `--state-machine-arn or ${arnVariable(flow)}`,
    );
  }

  private stackOutputs(): Promise<Record<string, string>> {
    this.outputs ??= (async () => {
      const connection = await this.connection();
      // The SDK loads only when a stack is described (the CLI's front stays light).
      const [{ cloudFormationClient }, { describeStack }] = await Promise.all([
        import('../adapters/aws-clients.js'),
        import('../adapters/cloudformation/stack-outputs.js'),
      ]);
      const client = cloudFormationClient(connection);
      try {
        const described = await Promise.all(this.stacks.map((name) => describeStack(client, name)));
        return mergeOutputs(
          described.map((stack, i) => {
            if (!stack) throw new StackNotFoundError(this.stacks[i] as string, connection.region);
            return stack;
          }),
        );
      } finally {
        client.destroy();
      }
    })();
    return this.outputs;
  }

  /**
   * The shared config and credentials files' paths (AWS_CONFIG_FILE,
   * AWS_SHARED_CREDENTIALS_FILE, else ~/.aws/…), each checked a regular file within its
   * size bound when present (an absent one is allowed: the SDK skips it).
   */
  private sharedFiles(): SharedConfigPaths {
    const home = homedir();
    const checked = (variable: string, fallback: string) => {
      const path = this.env[variable]?.trim() || join(home, '.aws', fallback);
      readRegularFileSync(path, INPUT_LIMITS.awsSharedFile, variable);
      return path;
    };
    return {
      config: checked('AWS_CONFIG_FILE', 'config'),
      credentials: checked('AWS_SHARED_CREDENTIALS_FILE', 'credentials'),
    };
  }
}
