import { readFile, readdir, mkdtemp, rm } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inertFaults } from '../../src/adapters/fault-injector.js';
import { awsPorts } from '../../src/adapters/ports.js';
import { localRuntimeConfig } from '../../src/cli/local-config.js';
import { appendBatch } from '../../src/stream/append-batch.js';
import { loadCursor } from '../../src/stream/cursor/store.js';
import { loadHead } from '../../src/stream/lane-store.js';
import { takeOverWithNewSession } from '../../src/stream/takeover.js';
import { REPO_ROOT } from '../../src/local/asl.js';
import { attachStateDir, runCutpointInProcess, type CliRun } from '../support/cli-runtime.js';

/**
 * `cutpoint stream consume | cursors | seek | policy` through the CLI's `main` in this
 * process, against a local runtime of its own: JSON lines on stdout, the cursor committed
 * after each batch, a crash between print and commit redelivering exactly that batch.
 */
let root = '';
let stateDir = '';
const outputs: string[] = [];

async function cutpoint(args: string[], options: { input?: string; faults?: string } = {}): Promise<CliRun> {
  const r = await runCutpointInProcess(args, {
    cwd: REPO_ROOT,
    stdin: options.input ?? '',
    env: { CUTPOINT_STATE_DIR: stateDir, CUTPOINT_FAULTS: options.faults ?? '' },
  });
  outputs.push(r.stdout, r.stderr);
  return r;
}

/** The offsets and texts of consume's JSON lines. */
function lines(r: CliRun): Array<[number, string]> {
  return r.stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const record = JSON.parse(line) as { offset: number; text: string };
      return [record.offset, record.text];
    });
}

const texts = (from: number, to: number): Array<[number, string]> =>
  Array.from({ length: to - from }, (_, i) => [from + i, `event-${from + i}`]);
const consume = (...extra: string[]) => [
  'stream',
  'consume',
  'events',
  '--partition',
  '0',
  '--group',
  'billing',
  '--text',
  ...extra,
];

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'cutpoint-stream-cursor-cli-'));
  stateDir = join(root, 'local');
  await attachStateDir(stateDir);
  expect((await cutpoint(['stream', 'create', 'events', '--partitions', '1'])).code).toBe(0);
  expect((await cutpoint(['stream', 'takeover', 'events', '--partition', '0'])).code).toBe(0);
  const append = await cutpoint(['stream', 'append', 'events', '--partition', '0', '--attempt', 'a1'], {
    input: texts(0, 6)
      .map(([, t]) => t)
      .join('\n'),
  });
  expect(append.code, append.stderr).toBe(0);
}, 240_000);

afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

describe('cutpoint stream consume', () => {
  it('consume 2 batches, crash before the second commit, consume again: only the uncommitted batch is delivered again, nothing skipped', async () => {
    const crashed = await cutpoint(consume('--batch', '3'), { faults: 'stream.cursor.commit:crash-before@2' });
    expect(crashed.code).toBe(1);
    expect(lines(crashed)).toEqual(texts(0, 6)); // both batches were printed
    expect(crashed.stderr).toMatch(/^cutpoint\.worker_crashed: /m);

    const again = await cutpoint(consume('--batch', '3'));
    expect(again.code, again.stderr).toBe(0);
    expect(lines(again)).toEqual(texts(3, 6)); // the batch whose commit never happened, once more
    expect(again.stderr).toMatch(/resuming cursor billing/);

    const caughtUp = await cutpoint(consume());
    expect(caughtUp).toMatchObject({ code: 0, stdout: '' });
  });

  it('stops at --max; `cursors` shows positions and lag, never a session id', async () => {
    await cutpoint(['stream', 'append', 'events', '--partition', '0', '--attempt', 'a2'], {
      input: texts(6, 9)
        .map(([, t]) => t)
        .join('\n'),
    });
    const two = await cutpoint(consume('--max', '2'));
    expect(lines(two)).toEqual(texts(6, 8));
    const listed = await cutpoint(['stream', 'cursors', 'events', '--partition', '0']);
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout)).toMatchObject({
      committedEnd: 9,
      trimOffset: 0,
      retention: [],
      cursors: [{ group: 'billing', position: 8, lag: 1, epoch: 1, retained: false }],
    });
  });

  it('seek needs --yes (exit 2, nothing moved); with it, the cursor moves back and consume replays from there', async () => {
    const refused = await cutpoint(['stream', 'seek', 'events', '--partition', '0', '--group', 'billing', '--to', '1']);
    expect(refused).toMatchObject({ code: 2, stdout: '' });
    expect(refused.stderr).toMatch(/^cli\.usage: .*--yes/);
    const seek = await cutpoint([
      'stream',
      'seek',
      'events',
      '--partition',
      '0',
      '--group',
      'billing',
      '--to',
      '1',
      '--yes',
    ]);
    expect(seek.code, seek.stderr).toBe(0);
    expect(JSON.parse(seek.stdout)).toMatchObject({ group: 'billing', position: 1, previousPosition: 8, epoch: 2 });
    const replay = await cutpoint(consume('--max', '2'));
    expect(lines(replay)).toEqual(texts(1, 3));
    expect(replay.stderr).toMatch(/resuming cursor billing .* \(epoch 2\)/);
  });

  it('a retention policy naming the group holds a trim at its cursor (exit 1, empty stdout, nothing trimmed)', async () => {
    expect(JSON.parse((await cutpoint(['stream', 'policy', 'events', '--groups', 'billing'])).stdout)).toEqual({
      stream: 'events',
      groups: ['billing'],
    });
    const trim = await cutpoint(['stream', 'trim', 'events', '--partition', '0', '--to', '5']);
    expect(trim).toMatchObject({ code: 1, stdout: '' });
    expect(trim.stderr).toMatch(/^stream\.trim_past_cursor: .*group billing, whose cursor is at 3/m);
    expect((await cutpoint(['stream', 'trim', 'events', '--partition', '0', '--to', '3'])).code).toBe(0);
  });

  it('grammar errors exit 2 with nothing on stdout; a missing lane is exit 1 and stores no session', async () => {
    for (const args of [
      ['stream', 'consume', 'events', '--partition', '0'],
      ['stream', 'consume', 'events', '--partition', '0', '--group', 'g', '--batch', '0'],
      ['stream', 'consume', 'events', '--partition', '0', '--group', 'g', '--max', '-1'],
      ['stream', 'cursors', 'events'],
      ['stream', 'seek', 'events', '--partition', '0', '--group', 'g', '--yes'],
      ['stream', 'policy', 'events'],
    ]) {
      const r = await cutpoint(args);
      expect(r, args.join(' ')).toMatchObject({ code: 2, stdout: '' });
    }
    const bad = await cutpoint(['stream', 'consume', 'events', '--partition', '0', '--group', 'no/slash']);
    expect(bad).toMatchObject({ code: 1, stdout: '' });
    expect(bad.stderr).toMatch(/^stream\.invalid_group: /m);
    const missing = await cutpoint(['stream', 'consume', 'nosuch', '--partition', '0', '--group', 'g']);
    expect(missing).toMatchObject({ code: 1, stdout: '' });
    expect(missing.stderr).toMatch(/^stream\.lane_missing: /m);
    expect(await readdir(join(root, 'sessions', 'cursors'))).toEqual(['events']);
  });

  it('--follow waits at the committed end for new records and delivers them', async () => {
    process.env.CUTPOINT_STATE_DIR = stateDir;
    const ports = awsPorts(await localRuntimeConfig(), inertFaults);
    const lane = { stream: 'events', partition: 0 };
    const writer = await takeOverWithNewSession(lane, 'follow-writer', ports);
    const end = (await loadHead(ports, lane)).committedEnd;
    const position = JSON.parse((await cutpoint(['stream', 'cursors', 'events', '--partition', '0'])).stdout).cursors[0]
      .position as number;
    const tail = texts(position, end);
    const following = cutpoint(consume('--follow', '--max', String(tail.length + 2)));
    // Consume has printed the tail and committed its cursor at the end (after each batch): from here on it polls.
    while ((await loadCursor(ports, lane, 'billing'))?.position !== end) await sleep(25);
    const records = [`event-${end}`, `event-${end + 1}`].map((t) => new TextEncoder().encode(t));
    expect((await appendBatch({ ...lane, attemptId: 'follow-1', session: writer, records }, ports)).status).toBe(
      'KNOWN_COMMITTED',
    );
    const r = await following;
    expect(r.code, r.stderr).toBe(0);
    expect(lines(r)).toEqual([...tail, ...texts(end, end + 2)]);
  });

  it('never prints a cursor session id', async () => {
    const file = join(root, 'sessions', 'cursors', 'events', '0', 'billing.json');
    const stored = JSON.parse(await readFile(file, 'utf8')) as { active: { session: string } };
    expect(stored.active.session).toMatch(/^[0-9a-f-]{36}$/);
    for (const output of outputs) expect(output).not.toContain(stored.active.session);
  });
});
