import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { machineName } from './sfn-aws.js';

/**
 * `npm run test:aws` (test/conformance/aws.ts) refuses before touching any account when its
 * arguments or the credentials are missing. (Its cases are the ones conformance.test.ts runs
 * on the emulators and the local state-machine runner; the AWS run itself needs an account
 * this machine does not have.)
 */
const ROLE = 'arn:aws:iam::123456789012:role/service-role/cutpoint-conformance';
const run = (args: string[], env: Record<string, string> = {}) =>
  spawnSync(process.execPath, ['--import', 'tsx', 'test/conformance/aws.ts', ...args], {
    encoding: 'utf8',
    env: {
      ...process.env,
      AWS_ACCESS_KEY_ID: '',
      AWS_SECRET_ACCESS_KEY: '',
      AWS_PROFILE: '',
      AWS_EC2_METADATA_DISABLED: 'true',
      AWS_CONFIG_FILE: '/nonexistent',
      AWS_SHARED_CREDENTIALS_FILE: '/nonexistent',
      ...env,
    },
    timeout: 60_000,
  });

describe('npm run test:aws', () => {
  it('exits 2 with its usage, nothing on stdout, without --stack or with a bad one', () => {
    for (const args of [[], ['--stack', 'X!', '--role-arn', ROLE], ['--stacks', 'a']]) {
      const r = run(args, { AWS_REGION: 'eu-west-1' });
      expect({ status: r.status, stdout: r.stdout }, r.stderr).toEqual({ status: 2, stdout: '' });
      expect(r.stderr).toContain('usage: npm run test:aws -- --stack NAME');
    }
  }, 120_000);

  it('exits 2 with its usage without --role-arn or with one that is not an IAM role ARN', () => {
    for (const role of [[], ['--role-arn', 'role/conformance'], ['--role-arn', 'arn:aws:iam::12345:role/x']]) {
      const r = run(['--stack', 'cutpoint-conf-test', ...role], { AWS_REGION: 'eu-west-1' });
      expect({ status: r.status, stdout: r.stdout }, r.stderr).toEqual({ status: 2, stdout: '' });
      expect(r.stderr).toContain('--role-arn ARN (an IAM role for the state machines) is required');
    }
  }, 120_000);

  it('exits 2 without credentials, having created nothing', () => {
    const r = run(['--stack', 'cutpoint-conf-test', '--role-arn', ROLE, '--region', 'eu-west-1']);
    expect({ status: r.status, stdout: r.stdout }, r.stderr).toEqual({ status: 2, stdout: '' });
    expect(r.stderr).toContain('no AWS credentials');
  }, 120_000);
});

describe('the Step Functions cases on AWS', () => {
  it("name each state machine after the stack and the case's key, in the characters and length Step Functions allows", () => {
    expect(machineName('cutpoint-conf-test', 'conformance/1a2b3c4d/17')).toBe(
      'cutpoint-conf-test-conformance-1a2b3c4d-17',
    );
    const long = machineName('a'.repeat(40), `conformance/${'b'.repeat(40)}/9`);
    expect({ length: long.length, allowed: /^[A-Za-z0-9_-]+$/.test(long) }).toEqual({ length: 80, allowed: true });
  });
});
