import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { outputOfFlow } from '../../src/cli/aws-settings.js';
import { streamHelp } from '../../src/cli/commands/stream.js';
import { runCutpointInProcess } from '../support/cli-runtime.js';

/**
 * `cutpoint stream materialize | compact` start their flows: with --aws the deployed state
 * machine (--state-machine-arn, the variable, or the stacks' output), and
 * --state-machine-arn / --name / --stack need --aws (grammar, exit 2, before anything is opened).
 */
const stateDir = join(tmpdir(), `cutpoint-stream-maintenance-grammar-${process.pid}-never-created`);
const cutpoint = (argv: string[]) =>
  runCutpointInProcess(argv, {
    env: { CUTPOINT_STATE_DIR: stateDir, CUTPOINT_STREAM_COMPACT_ARN: '', CUTPOINT_STREAM_MATERIALIZE_ARN: '' },
  });

async function usage(argv: string[]): Promise<string> {
  const r = await cutpoint(argv);
  expect({ argv, code: r.code, stdout: r.stdout }).toEqual({ argv, code: 2, stdout: '' });
  expect(r.stderr, argv.join(' ')).toMatch(/^cli\.usage: /);
  return r.stderr;
}

describe('cutpoint stream materialize | compact --aws', () => {
  it.each([
    ['compact', 'stream-compact', 'CUTPOINT_STREAM_COMPACT_ARN'],
    ['materialize', 'stream-materialize', 'CUTPOINT_STREAM_MATERIALIZE_ARN'],
  ])(
    '%s --aws needs the deployed %s state machine; --state-machine-arn and --name need --aws',
    async (verb, flow, variable) => {
      // Without --state-machine-arn or the variable, the deployed stacks' output names the state machine.
      expect(await usage(['stream', verb, 'logs', '--partition', '0', '--stack', 'CutpointWorkflows'])).toContain(
        '--stack needs --aws',
      );
      expect(outputOfFlow(flow)).toBe(`${verb === 'compact' ? 'StreamCompact' : 'StreamMaterialize'}StateMachineArn`);
      expect(await usage(['stream', verb, 'logs', '--partition', '0', '--name', 'run-1'])).toContain(
        '--state-machine-arn and --name need --aws',
      );
      expect(
        await usage([
          'stream',
          verb,
          'logs',
          '--partition',
          '0',
          '--state-machine-arn',
          'arn:aws:states:eu-west-1:111111111111:stateMachine:x',
        ]),
      ).toContain('need --aws');
      expect(streamHelp).toContain(variable.replace('CUTPOINT_STREAM', ''));
    },
  );
});
