import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attachStateDir, runCutpointInProcess, type CliRun } from '../support/cli-runtime.js';
import { REPO_ROOT } from '../../src/local/asl.js';

/** `cutpoint stream gc | leases` and describe's lifecycle, on the run's emulators under a table and bucket of its own. */
let root = '';
let stateDir = '';

async function cutpoint(
  args: string[],
  options: { input?: string; faults?: string; env?: Record<string, string> } = {},
): Promise<CliRun> {
  return runCutpointInProcess(args, {
    cwd: REPO_ROOT,
    stdin: options.input ?? '',
    env: { CUTPOINT_STATE_DIR: stateDir, CUTPOINT_FAULTS: options.faults ?? '', ...options.env },
  });
}

function json(r: CliRun): Record<string, unknown> {
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'cutpoint-gc-cli-'));
  stateDir = join(root, 'local');
  await attachStateDir(stateDir);
});

afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

describe('cutpoint stream gc', () => {
  it('grammar errors exit 2 and touch nothing', async () => {
    for (const args of [
      ['stream', 'gc', 'logs'],
      ['stream', 'gc', 'logs', '--partition', '0', '--grace', '10 minutes'],
      ['stream', 'gc', 'logs', '--partition', '0', '--grace', '91d'],
      ['stream', 'gc', 'logs', '--partition', '0', '--dry-run=yes'],
      ['stream', 'leases', 'logs'],
    ]) {
      const r = await cutpoint(args);
      expect(r, args.join(' ')).toMatchObject({ code: 2, stdout: '' });
      expect(r.stderr).toMatch(/^cli\.usage: /);
    }
    const missing = await cutpoint(['stream', 'gc', 'nope', '--partition', '0']);
    expect(missing).toMatchObject({ code: 1, stdout: '' });
    expect(missing.stderr).toMatch(/stream\.lane_missing: /);
  }, 120_000);

  it('dry run, orphan grace in describe, trimmed bytes collected, leases listed', async () => {
    json(await cutpoint(['stream', 'create', 'logs', '--partitions', '1']));
    json(await cutpoint(['stream', 'takeover', 'logs', '--partition', '0', '--owner', 'ops@test']));
    json(await cutpoint(['stream', 'append', 'logs', '--partition', '0', '--attempt', 'a1'], { input: 'x\ny\n' }));
    json(await cutpoint(['stream', 'append', 'logs', '--partition', '0', '--attempt', 'a2'], { input: 'z\n' }));
    // An append proven not committed leaves its WAL bytes unreferenced: an orphan.
    const failed = await cutpoint(['stream', 'append', 'logs', '--partition', '0', '--attempt', 'a3'], {
      input: 'w\n',
      faults: 'stream.append.head-cas:fail*',
    });
    expect(failed.code, failed.stderr).toBe(1);
    // While its outcome is unknown the bytes MAY commit: never a candidate.
    const unsure = json(await cutpoint(['stream', 'gc', 'logs', '--partition', '0', '--grace', '0s', '--dry-run']));
    expect(unsure.totals).toMatchObject({ mayCommit: 1 });
    expect((unsure.wouldMark as string[]).some((k) => k.includes('/a3/'))).toBe(false);
    // Resolved: proven not committed (exit 1 says so), its bytes an orphan.
    const resolved = await cutpoint(['stream', 'resolve', 'logs', '--partition', '0', '--attempt', 'a3']);
    expect(resolved.code, resolved.stderr).toBe(0);
    expect(JSON.parse(resolved.stdout)).toMatchObject({ status: 'KNOWN_NOT_COMMITTED' });
    json(await cutpoint(['stream', 'trim', 'logs', '--partition', '0', '--to', '2']));

    const dry = json(await cutpoint(['stream', 'gc', 'logs', '--partition', '0', '--grace', '0s', '--dry-run']));
    expect(dry).toMatchObject({ dryRun: true, graceSeconds: 0, totals: { marked: 0, deleted: 0 } });
    expect((dry.wouldMark as string[]).some((k) => k.includes('/a1/'))).toBe(true);
    expect((dry.wouldMark as string[]).some((k) => k.includes('/a3/'))).toBe(true);

    const run = json(await cutpoint(['stream', 'gc', 'logs', '--partition', '0', '--grace', '10m']));
    expect(run).toMatchObject({ graceSeconds: 600, totals: { inGrace: 1 } });
    expect((run.totals as { deleted: number }).deleted).toBe(1); // a1's WAL object (generation 0 is materialized off the ack path; none ran here)

    const described = json(await cutpoint(['stream', 'describe', 'logs']));
    const lane = (
      described.lanes as Array<{
        lifecycle?: { roots: Record<string, number>; orphans: Array<{ key: string; graceDeadline: string }> };
      }>
    )[0]!;
    expect(lane.lifecycle?.roots.DELETED).toBe(1);
    expect(lane.lifecycle?.orphans).toHaveLength(1);
    expect(lane.lifecycle?.orphans[0]?.key).toContain('/a3/');
    expect(Date.parse(lane.lifecycle!.orphans[0]!.graceDeadline)).toBeGreaterThan(Date.now());

    // Reads pin and release: no lease is left behind.
    json(await cutpoint(['stream', 'read', 'logs', '--partition', '0', '--from', '2']));
    expect(json(await cutpoint(['stream', 'leases', 'logs', '--partition', '0']))).toEqual({
      stream: 'logs',
      partition: 0,
      leases: [],
    });
  });

  it("a run longer than one execution's page budget continues in further executions and prints the whole run once", async () => {
    json(await cutpoint(['stream', 'create', 'cont', '--partitions', '1']));
    json(await cutpoint(['stream', 'takeover', 'cont', '--partition', '0']));
    for (const attempt of ['k1', 'k2', 'k3'])
      json(
        await cutpoint(['stream', 'append', 'cont', '--partition', '0', '--attempt', attempt], {
          input: `${attempt}\n`,
        }),
      );
    json(await cutpoint(['stream', 'trim', 'cont', '--partition', '0', '--to', '3']));
    const bad = await cutpoint(['stream', 'gc', 'cont', '--partition', '0'], { env: { CUTPOINT_GC_PAGES: '0' } });
    expect(bad).toMatchObject({ code: 1, stdout: '' });
    expect(bad.stderr).toMatch(/^stream\.invalid_gc_pages: /);
    // One page per execution: the WAL listing, the generations listing and the sweep each take one.
    const run = json(
      await cutpoint(['stream', 'gc', 'cont', '--partition', '0', '--grace', '0s'], {
        env: { CUTPOINT_GC_PAGES: '1' },
      }),
    );
    expect(run).toMatchObject({ done: true, totals: { scanned: 3, trimmed: 3, marked: 3, deleted: 3, finalized: 3 } });
    expect(run.next).toBeUndefined();
  });

  it('stream materialize: generation 0 off the ack path, N ranges per run from the lane mark; bad --max exits 2', async () => {
    json(await cutpoint(['stream', 'create', 'mat', '--partitions', '1']));
    json(await cutpoint(['stream', 'takeover', 'mat', '--partition', '0']));
    for (const attempt of ['m1', 'm2', 'm3'])
      json(
        await cutpoint(['stream', 'append', 'mat', '--partition', '0', '--attempt', attempt], {
          input: `${attempt}\n`,
        }),
      );
    for (const max of ['0', '1001', 'x'])
      expect(await cutpoint(['stream', 'materialize', 'mat', '--partition', '0', '--max', max])).toMatchObject({
        code: 2,
        stdout: '',
      });
    const first = json(await cutpoint(['stream', 'materialize', 'mat', '--partition', '0', '--max', '2']));
    expect(first).toMatchObject({ next: 2 });
    expect((first.materialized as unknown[]).length).toBe(2);
    const rest = json(await cutpoint(['stream', 'materialize', 'mat', '--partition', '0']));
    expect(rest).toMatchObject({ next: 3, materialized: [{ start: 2, end: 3 }] });
    expect(json(await cutpoint(['stream', 'materialize', 'mat', '--partition', '0']))).toMatchObject({
      next: 3,
      materialized: [],
    });
    const read = json(await cutpoint(['stream', 'read', 'mat', '--partition', '0', '--from', '0', '--text']));
    expect(JSON.stringify(read)).toContain('m3');
  }, 120_000);
});
