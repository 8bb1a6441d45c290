import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attachStateDir, runCutpointInProcess, type CliRun } from '../support/cli-runtime.js';
import { REPO_ROOT } from '../../src/local/asl.js';

/**
 * `cutpoint stream …` as an operator runs it, against a local runtime of its own
 * (CUTPOINT_STATE_DIR, attached to the run's emulators), stdout JSON, stderr diagnostics, exit 0/1/2. Most runs are the
 * CLI's `main` in this process (the bin only adds process startup, seconds each on a
 * loaded machine); one runs the real bin in a child process, for the records that come
 * through a real pipe on its stdin (the exit status a real process gets: cli.test.ts).
 */
let root = '';
let stateDir = '';
const outputs: string[] = [];

interface Options {
  input?: string;
  faults?: string;
  stateDir?: string;
}

/** The CLI's `main` in this process: `input` is its stdin, `faults` its CUTPOINT_FAULTS. */
async function cutpoint(args: string[], options: Options = {}): Promise<CliRun> {
  const r = await runCutpointInProcess(args, {
    cwd: REPO_ROOT,
    stdin: options.input ?? '',
    env: { CUTPOINT_STATE_DIR: options.stateDir ?? stateDir, CUTPOINT_FAULTS: options.faults ?? '' },
  });
  outputs.push(r.stdout, r.stderr);
  return r;
}

/** The real bin in a child process: `input` through a pipe, the state dir and faults in its env. */
function bin(args: string[], options: Options = {}): CliRun {
  const out = spawnSync(process.execPath, [`${REPO_ROOT}bin/cutpoint.js`, ...args], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    input: options.input ?? '',
    env: { ...process.env, CUTPOINT_STATE_DIR: options.stateDir ?? stateDir, CUTPOINT_FAULTS: options.faults ?? '' },
    timeout: 120_000,
  });
  outputs.push(out.stdout, out.stderr);
  return { code: out.status, stdout: out.stdout, stderr: out.stderr };
}

/** The one diagnostic line (`<code>: <message>`) among the progress lines on stderr. */
function diagnostic(stderr: string): string {
  return stderr
    .split('\n')
    .filter((line) => line && !line.startsWith('cutpoint: '))
    .join('\n');
}

function json(r: { code: number | null; stdout: string; stderr: string }): Record<string, unknown> {
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

const readTexts = async (from: number) =>
  (
    json(await cutpoint(['stream', 'read', 'orders', '--partition', '0', '--from', String(from), '--text']))
      .records as Array<{ offset: number; text: string }>
  ).map((r) => [r.offset, r.text]);

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'cutpoint-stream-cli-'));
  stateDir = join(root, 'local');
  await attachStateDir(stateDir);
});

afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

describe('cutpoint stream', () => {
  it('argument grammar errors exit 2 with nothing on stdout', async () => {
    for (const args of [
      ['stream'],
      ['stream', 'frobnicate', 'orders'],
      ['stream', 'create', 'orders'],
      ['stream', 'append', 'orders', '--partition', 'x', '--attempt', 'a1'],
      ['stream', 'append', 'orders', '--partition', '0'],
      ['stream', 'append', 'orders', '--partition', '0', '--attempt', 'a1', '--format', 'csv'],
      ['stream', 'read', 'orders', '--partition', '0'],
      ['stream', 'read', 'orders', '--partition', '0', '--from', '0', '--bogus'],
      ['stream', 'trim', 'orders', '--partition', '0', '--to', '-1'],
      ['stream', 'describe', 'orders', 'extra'],
    ]) {
      const r = await cutpoint(args);
      expect(r, args.join(' ')).toMatchObject({ code: 2, stdout: '' });
      expect(r.stderr).toMatch(/^cli\.usage: /);
    }
    // The exit status a real process gets from main's result: cli.test.ts (one spawn for all commands).
  });

  it('create → takeover → append (stdin lines) → read → describe', async () => {
    const created = json(await cutpoint(['stream', 'create', 'orders', '--partitions', '2']));
    expect(created).toMatchObject({
      stream: 'orders',
      partitions: 2,
      lanes: [
        { partition: 0, committedEnd: 0 },
        { partition: 1, committedEnd: 0 },
      ],
    });

    // No session yet: refused before anything runs, with the command that fixes it.
    const refused = await cutpoint(['stream', 'append', 'orders', '--partition', '0', '--attempt', 'a0'], {
      input: 'a\n',
    });
    expect(refused).toMatchObject({ code: 1, stdout: '' });
    expect(diagnostic(refused.stderr)).toMatch(
      /^stream\.no_session: .*run: cutpoint stream takeover orders --partition 0$/,
    );

    const taken = json(await cutpoint(['stream', 'takeover', 'orders', '--partition', '0', '--owner', 'ops@test']));
    expect(taken).toEqual({ stream: 'orders', partition: 0, owner: 'ops@test', epoch: 1, committedEnd: 0 });
    const file = join(root, 'sessions', 'orders-0.json');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const stored = JSON.parse(await readFile(file, 'utf8')) as { active: { session: string; epoch: number } };
    expect(stored.active.epoch).toBe(1);

    // A spawn: the records come through a real pipe on the child's stdin.
    const appended = json(
      bin(['stream', 'append', 'orders', '--partition', '0', '--attempt', 'a1'], { input: 'alpha\nbeta\ngamma\n' }),
    );
    expect(appended).toMatchObject({ status: 'KNOWN_COMMITTED', attemptId: 'a1', recordCount: 3, start: 0, end: 3 });

    const read = json(await cutpoint(['stream', 'read', 'orders', '--partition', '0', '--from', '0', '--text']));
    expect(read).toMatchObject({ stream: 'orders', partition: 0, from: 0, next: 3, committedEnd: 3, trimOffset: 0 });
    expect(read.records).toEqual([
      { offset: 0, data: Buffer.from('alpha').toString('base64'), text: 'alpha' },
      { offset: 1, data: Buffer.from('beta').toString('base64'), text: 'beta' },
      { offset: 2, data: Buffer.from('gamma').toString('base64'), text: 'gamma' },
    ]);

    const described = json(await cutpoint(['stream', 'describe', 'orders']));
    expect(described).toEqual({
      stream: 'orders',
      partitions: 2,
      lanes: [
        { partition: 0, committedEnd: 3, trimOffset: 0, attemptWindow: '7d', owner: { owner: 'ops@test', epoch: 1 } },
        { partition: 1, committedEnd: 0, trimOffset: 0, attemptWindow: '7d' },
      ],
    });

    // Re-running a committed attempt is the same append, not a second one.
    const again = json(
      await cutpoint(['stream', 'append', 'orders', '--partition', '0', '--attempt', 'a1'], {
        input: 'alpha\nbeta\ngamma\n',
      }),
    );
    expect(again).toMatchObject({ status: 'KNOWN_COMMITTED', start: 0, end: 3 });
    expect(await readTexts(0)).toEqual([
      [0, 'alpha'],
      [1, 'beta'],
      [2, 'gamma'],
    ]);
  }, 120_000);

  it('a lost head-CAS response is resolved inside the flow by the exact intent: KNOWN_COMMITTED once', async () => {
    // CUTPOINT_FAULTS reaches the command through the environment.
    const r = await cutpoint(['stream', 'append', 'orders', '--partition', '0', '--attempt', 'a2'], {
      input: 'delta\nepsilon\n',
      faults: 'stream.append.head-cas:lose-response',
    });
    expect(json(r)).toMatchObject({ status: 'KNOWN_COMMITTED', attemptId: 'a2', start: 3, end: 5 });
    expect(r.stderr).toContain('fault fired: stream.append.head-cas lose-response');
    // Resolving it again proves the same range and lifts nothing.
    expect(json(await cutpoint(['stream', 'resolve', 'orders', '--partition', '0', '--attempt', 'a2']))).toMatchObject({
      status: 'KNOWN_COMMITTED',
      start: 3,
      end: 5,
      unsuspended: false,
    });
    expect(await readTexts(3)).toEqual([
      [3, 'delta'],
      [4, 'epsilon'],
    ]);
  });

  it('MAY_HAVE_COMMITTED suspends the lane until the same attempt is resolved; then a new attempt continues at the next offset', async () => {
    const unknown = await cutpoint(['stream', 'append', 'orders', '--partition', '0', '--attempt', 'a3'], {
      input: 'zeta\neta\n',
      faults: 'stream.append.head-cas:lose-request*',
    });
    expect(unknown).toMatchObject({ code: 1, stdout: '' });
    expect(diagnostic(unknown.stderr)).toBe(
      'stream.may_have_committed: lane suspended; run: cutpoint stream resolve orders --partition 0 --attempt a3',
    );

    // An unknown outcome is never permission for a second append.
    const blocked = await cutpoint(['stream', 'append', 'orders', '--partition', '0', '--attempt', 'a4'], {
      input: 'zeta\neta\n',
    });
    expect(blocked).toMatchObject({ code: 1, stdout: '' });
    expect(diagnostic(blocked.stderr)).toMatch(
      /^stream\.not_committed: Stream\.LaneSuspended; append again with a new --attempt/,
    );
    expect(json(await cutpoint(['stream', 'describe', 'orders', '--partitions', '1']))).toMatchObject({
      lanes: [{ committedEnd: 5, suspendedBy: 'a3' }],
    });

    const resolved = json(await cutpoint(['stream', 'resolve', 'orders', '--partition', '0', '--attempt', 'a3']));
    expect(resolved).toMatchObject({ status: 'KNOWN_NOT_COMMITTED', attemptId: 'a3', unsuspended: true });

    const next = json(
      await cutpoint(['stream', 'append', 'orders', '--partition', '0', '--attempt', 'a5'], { input: 'zeta\neta\n' }),
    );
    expect(next).toMatchObject({ status: 'KNOWN_COMMITTED', start: 5, end: 7 });
    expect(await readTexts(0)).toEqual([
      [0, 'alpha'],
      [1, 'beta'],
      [2, 'gamma'],
      [3, 'delta'],
      [4, 'epsilon'],
      [5, 'zeta'],
      [6, 'eta'],
    ]);
  }, 120_000);

  it('a worker that keeps dying at the head CAS suspends the lane; resolve proves the attempt and the next one commits once', async () => {
    const failed = await cutpoint(['stream', 'append', 'orders', '--partition', '0', '--attempt', 'a6'], {
      input: 'theta\n',
      faults: 'stream.append.head-cas:crash-before*',
    });
    expect(failed).toMatchObject({ code: 1, stdout: '' });
    expect(diagnostic(failed.stderr)).toMatch(
      /^stream\.may_have_committed: .*cutpoint stream resolve orders --partition 0 --attempt a6/,
    );

    const resolved = json(await cutpoint(['stream', 'resolve', 'orders', '--partition', '0', '--attempt', 'a6']));
    expect(resolved).toMatchObject({ status: 'KNOWN_NOT_COMMITTED', unsuspended: true });
    const next = json(
      await cutpoint(['stream', 'append', 'orders', '--partition', '0', '--attempt', 'a6b'], { input: 'theta\n' }),
    );
    expect(next).toMatchObject({ status: 'KNOWN_COMMITTED', start: 7, end: 8 });
    expect(await readTexts(7)).toEqual([[7, 'theta']]);
  }, 120_000);

  it('--input-format raw appends the whole file as one record; empty input is refused', async () => {
    const file = join(root, 'blob.txt');
    await writeFile(file, 'one\ntwo\n');
    const raw = json(
      await cutpoint([
        'stream',
        'append',
        'orders',
        '--partition',
        '0',
        '--attempt',
        'a7',
        '--file',
        file,
        '--input-format',
        'raw',
      ]),
    );
    expect(raw).toMatchObject({ status: 'KNOWN_COMMITTED', recordCount: 1, start: 8, end: 9 });
    expect(await readTexts(8)).toEqual([[8, 'one\ntwo\n']]);

    const empty = await cutpoint(['stream', 'append', 'orders', '--partition', '0', '--attempt', 'a8'], { input: '' });
    expect(empty).toMatchObject({ code: 1, stdout: '' });
    expect(diagnostic(empty.stderr)).toMatch(/^stream\.empty_batch: /);
  });

  it('trim moves forward only; reads below it are refused; a missing lane is a stable diagnostic', async () => {
    expect(json(await cutpoint(['stream', 'trim', 'orders', '--partition', '0', '--to', '3']))).toMatchObject({
      trimOffset: 3,
      previousTrimOffset: 0,
    });
    const below = await cutpoint(['stream', 'read', 'orders', '--partition', '0', '--from', '1']);
    expect(below).toMatchObject({ code: 1, stdout: '' });
    expect(diagnostic(below.stderr)).toMatch(/^stream\.offset_trimmed: /);
    const back = await cutpoint(['stream', 'trim', 'orders', '--partition', '0', '--to', '2']);
    expect(back).toMatchObject({ code: 1, stdout: '' });
    expect(diagnostic(back.stderr)).toMatch(/^stream\.trim_backwards: /);

    const missing = await cutpoint(['stream', 'takeover', 'nosuch', '--partition', '0']);
    expect(missing).toMatchObject({ code: 1, stdout: '' });
    expect(diagnostic(missing.stderr)).toMatch(/^stream\.lane_missing: /);
  }, 120_000);

  it('a refused takeover (missing lane, bad --owner, runtime down) leaves no session file', async () => {
    const down = join(root, 'down', 'local');
    for (const [args, code, stateDirOverride] of [
      [['stream', 'takeover', 'nosuch', '--partition', '0'], 'stream.lane_missing', undefined],
      [['stream', 'takeover', 'orders', '--partition', '7'], 'stream.lane_missing', undefined],
      [
        ['stream', 'takeover', 'orders', '--partition', '1', '--owner', 'bad owner!'],
        'stream.invalid_owner',
        undefined,
      ],
      [['stream', 'takeover', 'orders', '--partition', '1'], 'local.runtime_down', down],
    ] as const) {
      const r = await cutpoint([...args], { stateDir: stateDirOverride });
      expect(r, args.join(' ')).toMatchObject({ code: 1, stdout: '' });
      expect(diagnostic(r.stderr)).toMatch(new RegExp(`^${code.replace('.', '\\.')}: `));
    }
    for (const file of ['nosuch-0.json', 'orders-7.json', 'orders-1.json'])
      await expect(stat(join(root, 'sessions', file))).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(stat(join(root, 'down'))).rejects.toMatchObject({ code: 'ENOENT' });
  }, 120_000);

  it('a read past the committed end is refused (stream.offset_out_of_range); at the end it returns next = end', async () => {
    const end = (
      json(await cutpoint(['stream', 'describe', 'orders', '--partitions', '1'])).lanes as Array<{
        committedEnd: number;
      }>
    )[0]!.committedEnd;
    const past = await cutpoint(['stream', 'read', 'orders', '--partition', '0', '--from', String(end + 5)]);
    expect(past).toMatchObject({ code: 1, stdout: '' });
    expect(diagnostic(past.stderr)).toMatch(/^stream\.offset_out_of_range: /);
    expect(json(await cutpoint(['stream', 'read', 'orders', '--partition', '0', '--from', String(end)]))).toMatchObject(
      { records: [], next: end, committedEnd: end },
    );
  }, 120_000);

  it('a reused attempt id with other records is stream.attempt_identity_conflict, nothing appended', async () => {
    const before = json(await cutpoint(['stream', 'describe', 'orders', '--partitions', '1']));
    const r = await cutpoint(['stream', 'append', 'orders', '--partition', '0', '--attempt', 'a1'], {
      input: 'not\nthe\nsame\n',
    });
    expect(r).toMatchObject({ code: 1, stdout: '' });
    expect(diagnostic(r.stderr)).toMatch(/^stream\.attempt_identity_conflict: /);
    expect(json(await cutpoint(['stream', 'describe', 'orders', '--partitions', '1']))).toEqual(before);
  }, 120_000);

  it('object put never overwrites: other bytes are objects.identity_conflict, system roots are objects.reserved_key', async () => {
    expect(json(await cutpoint(['object', 'put', 'ops/report.txt'], { input: 'v1' }))).toMatchObject({
      key: 'ops/report.txt',
      status: 'WRITTEN',
    });
    expect(json(await cutpoint(['object', 'put', 'ops/report.txt'], { input: 'v1' }))).toMatchObject({
      status: 'REUSED',
    });
    const other = await cutpoint(['object', 'put', 'ops/report.txt'], { input: 'v2' });
    expect(other).toMatchObject({ code: 1, stdout: '' });
    expect(diagnostic(other.stderr)).toMatch(/^objects\.identity_conflict: /);
    const wal = await cutpoint(['object', 'put', 'wal/orders/0/a1/x.wal'], { input: 'evil' });
    expect(wal).toMatchObject({ code: 1, stdout: '' });
    expect(diagnostic(wal.stderr)).toMatch(/^objects\.reserved_key: /);
    // The committed records still read back (offsets below 3 are trimmed by now).
    expect((await readTexts(3)).slice(0, 2)).toEqual([
      [3, 'delta'],
      [4, 'epsilon'],
    ]);
  }, 120_000);

  it('never prints the session id (a fencing secret)', async () => {
    const stored = JSON.parse(await readFile(join(root, 'sessions', 'orders-0.json'), 'utf8')) as {
      active: { session: string };
    };
    expect(stored.active.session).toMatch(/^[0-9a-f-]{36}$/);
    for (const text of outputs) expect(text).not.toContain(stored.active.session);
  });
});
