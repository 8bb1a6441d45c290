import fc from 'fast-check';
import type { FuzzCase } from '../support/fuzz-cli.js';
import { GROUP, LAKE, STREAM, type FuzzWorld } from '../support/fuzz-world.js';
import { freshSuffix } from './arbitraries.js';

/**
 * The `--aws` options (AWS_OPTIONS, src/cli/aws-runtime.ts) on every command that has them,
 * each with one defect the grammar refuses before any AWS call: --profile, --region or
 * --stack without --aws; with --aws, a malformed --stack, --region or --profile, a flow run
 * without --name; --state-machine-arn / --name without --aws. Every case runs with the
 * shared config files pointed at nothing and no credentials in the environment, so even a
 * case that slipped past the grammar could not reach AWS (the SDK stops at "no
 * credentials"); a refusal from there would name an SDK error instead of a usage code.
 */

/** The environment of every case: no profile, credentials or region from this machine, no instance metadata. */
export const NO_AWS_ENV: Record<string, string | undefined> = {
  AWS_CONFIG_FILE: '/nonexistent/aws-config',
  AWS_SHARED_CREDENTIALS_FILE: '/nonexistent/aws-credentials',
  AWS_PROFILE: undefined,
  AWS_REGION: undefined,
  AWS_DEFAULT_REGION: undefined,
  AWS_ACCESS_KEY_ID: undefined,
  AWS_SECRET_ACCESS_KEY: undefined,
  AWS_SESSION_TOKEN: undefined,
  AWS_EC2_METADATA_DISABLED: 'true',
  CUTPOINT_TABLE_NAME: undefined,
  CUTPOINT_BUCKET_NAME: undefined,
};

/** Codes only a lookup on AWS can end with: a case refused by its grammar never gets that far. */
const AWS_CALLED =
  /^aws\.(describe_stacks_failed|stack_not_found|output_missing|output_ambiguous|[a-z_]*credentials[a-z_]*)$|^cutpoint\.internal_error$/;

/** Every command that takes --aws, as argv that would act (or read) on the deployed system. */
function awsCommands(world: FuzzWorld, sfx: string): Record<string, string[]> {
  const file = world.manifestFile;
  return {
    'stream read': ['stream', 'read', STREAM, '--partition', '0', '--from', '0'],
    'stream append': [
      'stream',
      'append',
      STREAM,
      '--partition',
      '0',
      '--attempt',
      `fz-${sfx}`,
      '--file',
      '{{records}}',
    ],
    'stream gc': ['stream', 'gc', STREAM, '--partition', '0', '--dry-run'],
    'stream compact': ['stream', 'compact', STREAM, '--partition', '0'],
    'stream seek': ['stream', 'seek', STREAM, '--partition', '0', '--group', GROUP, '--to', '1', '--yes'],
    'object put': ['object', 'put', `fz/${sfx}`, '--file', '{{records}}'],
    'delivery inspect': ['delivery', 'inspect', world.unknownId],
    'delivery reconcile': ['delivery', 'reconcile', world.unknownId, '--manifest', `${file}#lossy`, '--yes'],
    'delivery run': ['delivery', 'run', '--manifest', `${file}#daily`],
    'quality inspect-all': ['quality', 'inspect-all'],
    'quality observe': ['quality', 'observe', world.unknownId, '--manifest', `${file}#${LAKE}`, '--yes'],
    'flow run': [
      'flow',
      'run',
      'stream-trim',
      '--input',
      JSON.stringify({ stream: STREAM, partition: 0, to: 0 }),
      '--name',
      `fz-${sfx}`,
    ],
  };
}

const STACK_RULE = /^[A-Za-z][A-Za-z0-9-]{0,127}$/;
const badStack = fc
  .oneof(
    fc.constantFrom(
      '',
      ',',
      'Cutpoint Stateful',
      '1Stack',
      'stack_name',
      'CutpointStateful,',
      'CutpointStateful,CutpointStateful',
      'a'.repeat(129),
      'Stack\nX',
      'Stäck',
    ),
    fc.stringMatching(/^[A-Za-z][A-Za-z0-9-]{0,10}$/).map((s) => `${s}_x`),
  )
  .filter(
    (s) =>
      s.split(',').some((n) => !STACK_RULE.test(n.trim())) ||
      new Set(s.split(',').map((n) => n.trim())).size !== s.split(',').length,
  );
const badRegion = fc.constantFrom(
  '',
  'US-EAST-1',
  'us-east',
  'useast1',
  'us-east-1 ',
  'us_east_1',
  'eu-west-10a',
  'moon-1',
  'us-east-1\n',
  'x'.repeat(60),
);
const badProfile = fc.constantFrom(
  '',
  ' ',
  ' ops',
  'ops ',
  'ops\n[default]',
  '[ops]',
  'a]b',
  'p'.repeat(200),
  '\u001b[31mops',
  'ops\t',
);

export function awsOptionCases(world: FuzzWorld): fc.Arbitrary<FuzzCase> {
  return fc.tuple(freshSuffix, fc.nat()).chain(([sfx, pick]) => {
    const commands = awsCommands(world, sfx);
    const names = Object.keys(commands);
    const name = names[pick % names.length] as string;
    const base = commands[name] as string[];
    const mk = (what: string, extra: string[]): FuzzCase => ({
      what: `${name} ${what}`,
      argv: [...base, ...extra],
      files: { records: 'aws-record\n' },
      env: NO_AWS_ENV,
      forbiddenCodes: AWS_CALLED,
    });
    return fc.oneof(
      fc.subarray(['profile', 'region', 'stack'], { minLength: 1 }).map((flags) =>
        mk(
          `${flags.map((f) => `--${f}`).join(' ')} without --aws`,
          flags.flatMap((f) => [`--${f}`, f === 'region' ? 'us-east-1' : f === 'stack' ? 'CutpointStateful' : 'ops']),
        ),
      ),
      badStack.map((s) =>
        mk(`--aws --stack ${JSON.stringify(s).slice(0, 30)}`, ['--aws', '--region', 'us-east-1', '--stack', s]),
      ),
      badRegion.map((r) => mk(`--aws --region ${JSON.stringify(r).slice(0, 30)}`, ['--aws', '--region', r])),
      badProfile.map((p) =>
        mk(`--aws --profile ${JSON.stringify(p).slice(0, 30)}`, ['--aws', '--region', 'us-east-1', '--profile', p]),
      ),
      fc.constantFrom('--aws=yes', '--aws=1').map((a) => mk(a, [a])),
      // A shared config or credentials file that is no file to read: refused before anything reads it.
      fc
        .tuple(
          fc.constantFrom('AWS_CONFIG_FILE', 'AWS_SHARED_CREDENTIALS_FILE'),
          fc.constantFrom('/dev/zero', '/', '/proc/self/pagemap'),
        )
        .map(([variable, path]) => ({
          ...mk(`--aws with ${variable}=${path}`, ['--aws', '--region', 'us-east-1']),
          env: { ...NO_AWS_ENV, [variable]: path },
        })),
    );
  });
}

/** Flags that only mean something with --aws, given without it; a flow run on AWS without --name. */
export const awsOnlyFlagCases: fc.Arbitrary<FuzzCase> = fc.constantFrom<FuzzCase>(
  {
    what: 'flow run --aws without --name',
    argv: [
      'flow',
      'run',
      'stream-trim',
      '--input',
      JSON.stringify({ stream: STREAM, partition: 0, to: 0 }),
      '--aws',
      '--region',
      'us-east-1',
    ],
    env: NO_AWS_ENV,
  },
  {
    what: 'flow run --name without --aws',
    argv: [
      'flow',
      'run',
      'stream-trim',
      '--input',
      JSON.stringify({ stream: STREAM, partition: 0, to: 0 }),
      '--name',
      'x',
    ],
  },
  {
    what: 'stream trim --state-machine-arn without --aws',
    argv: [
      'stream',
      'trim',
      STREAM,
      '--partition',
      '0',
      '--to',
      '0',
      '--state-machine-arn',
      'arn:aws:states:us-east-1:111111111111:stateMachine:x',
    ],
  },
  {
    what: 'stream takeover --name without --aws',
    argv: ['stream', 'takeover', STREAM, '--partition', '0', '--name', 'x'],
  },
  // No region anywhere: refused before the takeover stores its session (the sessions snapshot).
  {
    what: 'stream takeover --aws without a region',
    argv: ['stream', 'takeover', STREAM, '--partition', '0', '--aws'],
    env: NO_AWS_ENV,
  },
  {
    what: 'quality observe --name without --aws',
    argv: ['quality', 'observe', 'inv-aaaaaaaaaaaaaaaaaaaaaaaaaa', '--manifest', '/x#lake', '--yes', '--name', 'x'],
  },
);
