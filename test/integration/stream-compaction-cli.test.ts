import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attachStateDir, runCutpointInProcess, type CliRun } from '../support/cli-runtime.js';
import { REPO_ROOT } from '../../src/local/asl.js';

/** `cutpoint stream compact`, on the run's emulators under a table and bucket of its own. */
let root = '';
let stateDir = '';

async function cutpoint(args: string[], options: { input?: string; faults?: string } = {}): Promise<CliRun> {
  return runCutpointInProcess(args, {
    cwd: REPO_ROOT,
    stdin: options.input ?? '',
    env: { CUTPOINT_STATE_DIR: stateDir, CUTPOINT_FAULTS: options.faults ?? '' },
  });
}

function json(r: CliRun): Record<string, unknown> {
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'cutpoint-compact-cli-'));
  stateDir = join(root, 'local');
  await attachStateDir(stateDir);
});

afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

describe('cutpoint stream compact', () => {
  it('grammar errors exit 2 and touch nothing; a missing lane exits 1 with empty stdout', async () => {
    for (const args of [
      ['stream', 'compact', 'logs'],
      ['stream', 'compact', 'logs', '--partition', '0', '--max-ranges', '1'],
      ['stream', 'compact', 'logs', '--partition', '0', '--max-ranges', 'x'],
    ]) {
      const r = await cutpoint(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(/^cli\.usage: /);
    }
    const missing = await cutpoint(['stream', 'compact', 'nope', '--partition', '0']);
    expect(missing.code).toBe(1);
    expect(missing.stdout).toBe('');
    expect(missing.stderr).toMatch(/stream\.lane_missing: /);
  }, 120_000);

  it('compacts a run, prints it as JSON, reads serve it; a failed run is finished by running again', async () => {
    json(await cutpoint(['stream', 'create', 'clogs', '--partitions', '1']));
    json(await cutpoint(['stream', 'takeover', 'clogs', '--partition', '0', '--owner', 'ops@test']));
    for (const [i, input] of ['a\nb\n', 'c\n', 'd\ne\n'].entries())
      json(await cutpoint(['stream', 'append', 'clogs', '--partition', '0', '--attempt', `a${i}`], { input }));
    const failed = await cutpoint(['stream', 'compact', 'clogs', '--partition', '0'], {
      faults: 'stream.compact.record:fail*',
    });
    expect(failed.code).toBe(1);
    expect(failed.stdout).toBe('');
    expect(failed.stderr).toMatch(/^[a-z_.]+: /);
    const out = json(await cutpoint(['stream', 'compact', 'clogs', '--partition', '0', '--max-ranges', '3']));
    expect(out).toMatchObject({
      stream: 'clogs',
      partition: 0,
      compacted: { start: 0, end: 5, ranges: 3, generation: 0 },
      next: 5,
      taskCleaned: true,
    });
    expect(json(await cutpoint(['stream', 'compact', 'clogs', '--partition', '0']))).toEqual({
      stream: 'clogs',
      partition: 0,
      next: 5,
      taskCleaned: false,
    });
    const read = json(await cutpoint(['stream', 'read', 'clogs', '--partition', '0', '--from', '0', '--text']));
    expect((read.records as Array<{ text: string }>).map((r) => r.text)).toEqual(['a', 'b', 'c', 'd', 'e']);
  }, 120_000);
});
