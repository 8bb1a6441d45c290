import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

/**
 * `npm run test:aws` (test/conformance/aws.ts) refuses before touching any account when its
 * arguments or the credentials are missing. (Its cases are the ones conformance.test.ts runs
 * on the emulators; the AWS run itself needs an account this machine does not have.)
 */
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
    for (const args of [[], ['--stack', 'X!'], ['--stacks', 'a']]) {
      const r = run(args, { AWS_REGION: 'eu-west-1' });
      expect({ status: r.status, stdout: r.stdout }, r.stderr).toEqual({ status: 2, stdout: '' });
      expect(r.stderr).toContain('usage: npm run test:aws -- --stack NAME');
    }
  }, 120_000);

  it('exits 2 without credentials, having created nothing', () => {
    const r = run(['--stack', 'cutpoint-conf-test', '--region', 'eu-west-1']);
    expect({ status: r.status, stdout: r.stdout }, r.stderr).toEqual({ status: 2, stdout: '' });
    expect(r.stderr).toContain('no AWS credentials');
  }, 120_000);
});
