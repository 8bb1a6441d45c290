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

  it('the demo (npm start): a lost publication COMMIT response, then inspect → reconcile → resume to CUSTODY_RELEASED; every window row exactly once', () => {
    const r = cutpoint(['demo']);
    expect(r.code, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout);
    const id = result.invocationId as string;
    expect(id).toMatch(/^inv-[a-z2-7]{26}$/);
    expect(result.run).toMatchObject({ flow: 'deliver-window', status: 'FAILED', error: 'Delivery.NeedsRecovery', faultsFired: 1 });
    expect(result.run.cause).toContain('PUBLICATION_UNKNOWN');
    // The projections, in the order an operator runs them, each as `delivery … --format json` prints it.
    expect(Object.keys(result)).toEqual(['demo', 'route', 'invocationId', 'run', 'inspect', 'reconcile', 'resume', 'outcome']);
    const projection = (state: string, permitted: string[]) => ({
      kind: 'cutpoint.delivery-recovery.v1',
      schema_version: 1,
      invocation_id: id,
      route: 'daily',
      state,
      permitted_actions: permitted,
    });
    expect(result.inspect).toMatchObject({ command: `npx cutpoint delivery inspect ${id} --format json`, projection: projection('PUBLICATION_UNKNOWN', ['reconcile']) });
    expect(result.reconcile.command).toMatch(new RegExp(`^npx cutpoint delivery reconcile ${id} --manifest \\S+\\.yaml#daily --yes --format json$`));
    expect(result.reconcile.projection).toMatchObject(projection('PUBLISHED', ['resume']));
    expect(result.resume.projection).toMatchObject({ ...projection('CUSTODY_RELEASED', []), holds_custody: false });
    const { outcome } = result;
    expect(outcome).toMatchObject({ state: 'CUSTODY_RELEASED', duplicates: 0, missing: 0, rowsOutsideWindow: 0, receipts: 1, checkpointAdvanced: 1, sourceCallsDuringRecovery: 0 });
    expect(outcome.windowRowsInSource).toBeGreaterThan(0);
    expect(outcome.rowsInTarget).toBe(outcome.windowRowsInSource);
    expect(outcome.distinctKeys).toBe(outcome.windowRowsInSource);
    expect(outcome.checkpointWindowEnd).toBe(result.resume.projection.window.end);
    // The outcome is what the last lines of stdout say.
    expect(r.stdout.trimEnd().split('\n').slice(-16).join('\n')).toContain('"sourceCallsDuringRecovery": 0');
    // Progress on stderr, with the equivalent command for each step, in order.
    const steps = ['npx cutpoint delivery run --manifest', `$ npx cutpoint delivery inspect ${id}`, `$ npx cutpoint delivery reconcile ${id}`, `$ npx cutpoint delivery resume ${id}`].map((s) => r.stderr.indexOf(s));
    expect(steps.every((i) => i > 0)).toBe(true);
    expect([...steps].sort((a, b) => a - b)).toEqual(steps);
    expect(r.stderr).toContain('→ Publish');
    expect(r.stderr).toContain('→ StoppedForRecovery');
    // The connection values the bindings name never leave the process.
    for (const text of [r.stdout, r.stderr]) {
      expect(text).not.toMatch(/postgres(ql)?:\/\//);
      expect(text).not.toContain('chdb:');
    }
  }, 180_000);

  it('demo generation commits exactly one verified generation after a lost commit response', () => {
    const r = cutpoint(['demo', 'generation']);
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

  it('an unknown demo is a usage error: exit 2, nothing on stdout', () => {
    expect(cutpoint(['demo', 'nope'])).toMatchObject({ code: 2, stdout: '' });
  });
});
