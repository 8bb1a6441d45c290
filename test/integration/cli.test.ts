import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../src/local/asl.js';

/** The real `cutpoint` bin, as an operator runs it: stdout JSON, stderr diagnostics, exit 0/1/2. */
function cutpoint(args: string[], env: Record<string, string> = {}) {
  const out = spawnSync(process.execPath, [`${REPO_ROOT}bin/cutpoint.js`, ...args], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    env: { ...process.env, ...env },
    timeout: 120_000,
  });
  return { code: out.status, stdout: out.stdout, stderr: out.stderr };
}

describe('cutpoint CLI', () => {
  it('--help prints usage and exits 0', () => {
    const r = cutpoint(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('cutpoint local up|down|status');
    expect(r.stdout).toContain('CUTPOINT_FAULTS');
  });

  it('an unknown command is a usage error: exit 2, nothing on stdout', () => {
    const r = cutpoint(['frobnicate']);
    expect(r).toMatchObject({ code: 2, stdout: '' });
    expect(r.stderr).toMatch(/^cli\.unknown_command: /);
  });

  it('a flow command with bad arguments exits 2 before touching anything', () => {
    const r = cutpoint(['flow', 'run', 'no-such-flow', '--input', '{}']);
    expect(r).toMatchObject({ code: 2, stdout: '' });
  });

  it('an invalid fault spec is a stable diagnostic: exit 1, stdout empty', () => {
    const r = cutpoint(['flow', 'run', 'commit-generation', '--input', '{}'], { CUTPOINT_FAULTS: 'nonsense' });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim()).toMatch(/^(faults\.invalid_spec|local\.runtime_down): /);
  });

  it('the demo (npm start) commits exactly one verified generation after a lost commit response', () => {
    const r = cutpoint(['demo']);
    expect(r.code, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout);
    expect(result).toMatchObject({
      status: 'SUCCEEDED',
      outcome: { outcome: 'COMMITTED', resolvedBy: 'exact-winner-reload' },
      faultsFired: [{ cutPoint: 'generation.commit.cas', kind: 'lose-response' }],
      committedGenerations: 1,
      bytesVerified: true,
    });
    expect(r.stderr).toContain('→ ResolveCommit');
  });
});
