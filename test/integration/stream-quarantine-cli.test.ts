import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inertFaults } from '../../src/adapters/fault-injector.js';
import { awsPorts } from '../../src/adapters/ports.js';
import { localRuntimeConfig } from '../../src/cli/local-config.js';
import { laneKeys, type IndexEntry } from '../../src/domain/stream.js';
import type { Ports } from '../../src/ports/index.js';
import { REPO_ROOT } from '../../src/local/asl.js';
import { attachStateDir, runCutpointInProcess, type CliRun } from '../support/cli-runtime.js';
import { replaceObject } from '../support/replace-object.js';

/** `cutpoint stream quarantine` (list and --release), on the run's emulators under a table and bucket of its own. */
let root = '';
let stateDir = '';
let ports: Ports;

async function cutpoint(args: string[], input = ''): Promise<CliRun> {
  return runCutpointInProcess(args, {
    cwd: REPO_ROOT,
    stdin: input,
    env: { CUTPOINT_STATE_DIR: stateDir, CUTPOINT_FAULTS: '' },
  });
}

function json(r: CliRun): Record<string, unknown> {
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'cutpoint-quarantine-cli-'));
  stateDir = join(root, 'local');
  await attachStateDir(stateDir);
  const previous = process.env.CUTPOINT_STATE_DIR;
  process.env.CUTPOINT_STATE_DIR = stateDir;
  try {
    ports = awsPorts(await localRuntimeConfig(), inertFaults);
  } finally {
    if (previous === undefined) delete process.env.CUTPOINT_STATE_DIR;
    else process.env.CUTPOINT_STATE_DIR = previous;
  }
});

afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

describe('cutpoint stream quarantine', () => {
  it('grammar errors exit 2 and touch nothing; an unknown key exits 1 with its code and empty stdout', async () => {
    for (const args of [
      ['stream', 'quarantine', 'logs'],
      ['stream', 'quarantine', 'logs', '--partition', '0', '--release'],
    ]) {
      const r = await cutpoint(args);
      expect(r, args.join(' ')).toMatchObject({ code: 2, stdout: '' });
      expect(r.stderr).toMatch(/^cli\.usage: /);
    }
    const missing = await cutpoint(['stream', 'quarantine', 'nope', '--partition', '0']);
    expect(missing).toMatchObject({ code: 1, stdout: '' });
    expect(missing.stderr).toMatch(/stream\.lane_missing: /);
  }, 120_000);

  it('lists a quarantined copy, refuses to release it while bad, releases it once restored', async () => {
    json(await cutpoint(['stream', 'create', 'logs', '--partitions', '1']));
    json(await cutpoint(['stream', 'takeover', 'logs', '--partition', '0', '--owner', 'ops@test']));
    json(await cutpoint(['stream', 'append', 'logs', '--partition', '0', '--attempt', 'a1'], 'x\ny\n'));
    json(await cutpoint(['stream', 'materialize', 'logs', '--partition', '0']));
    expect(json(await cutpoint(['stream', 'quarantine', 'logs', '--partition', '0']))).toEqual({
      stream: 'logs',
      partition: 0,
      items: [],
    });

    const unknown = await cutpoint(['stream', 'quarantine', 'logs', '--partition', '0', '--release', 'no/such/key']);
    expect(unknown).toMatchObject({ code: 1, stdout: '' });
    expect(unknown.stderr).toMatch(/^stream\.quarantine_not_found: /);

    const entry = (await ports.authority.get(
      laneKeys.index({ stream: 'logs', partition: 0 }, 2),
    )) as unknown as IndexEntry;
    const good = (await ports.objects.get(entry.gen0Key!))!;
    expect(await replaceObject(ports.objects, entry.gen0Key!, new TextEncoder().encode('bad'), good.metadata)).toBe(
      'APPLIED',
    );
    const read = json(await cutpoint(['stream', 'read', 'logs', '--partition', '0', '--from', '0', '--text']));
    expect((read.records as Array<{ text: string }>).map((r) => r.text)).toEqual(['x', 'y']);

    const listed = json(await cutpoint(['stream', 'quarantine', 'logs', '--partition', '0']));
    expect(listed.items).toEqual([
      expect.objectContaining({ key: entry.gen0Key, reason: 'checksum_mismatch', at: expect.any(String) }),
    ]);
    const refused = await cutpoint(['stream', 'quarantine', 'logs', '--partition', '0', '--release', entry.gen0Key!]);
    expect(refused).toMatchObject({ code: 1, stdout: '' });
    expect(refused.stderr).toMatch(/^stream\.quarantine_still_bad: /);

    expect(await replaceObject(ports.objects, entry.gen0Key!, good.bytes, good.metadata)).toBe('APPLIED');
    const released = json(
      await cutpoint(['stream', 'quarantine', 'logs', '--partition', '0', '--release', entry.gen0Key!]),
    );
    expect(released).toMatchObject({ objectKey: entry.gen0Key, copy: 'gen0', start: 0, end: 2, released: true });
    expect(json(await cutpoint(['stream', 'quarantine', 'logs', '--partition', '0'])).items).toEqual([]);
  });
});
