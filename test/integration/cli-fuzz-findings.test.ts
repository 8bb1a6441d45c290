import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { laneKeys } from '../../src/domain/stream.js';
import { objectClaimKey } from '../../src/objects/claimed-put.js';
import { runCutpointInProcess, startCliRuntime, type CliRun, type CliRuntime } from '../support/cli-runtime.js';
import { closedPort } from '../support/fuzz-snapshot.js';
import { publicationManifest } from '../support/publication-world.js';

/**
 * Findings of the CLI fuzzing (issue 28) that need a local runtime: `stream create` of an
 * existing stream with another partition count, `object put` of a key with `.`/`..`/empty
 * path segments, and internal endpoints (host:port) in a diagnostic. The CLI's `main` in
 * this process against a runtime of this file's own (test/support/cli-runtime.ts).
 */
let rt: CliRuntime;

beforeAll(async () => {
  rt = await startCliRuntime('fuzz-findings', publicationManifest());
});

afterAll(async () => {
  await rt?.stop();
});

const cli = (argv: string[], options: Parameters<typeof runCutpointInProcess>[1] = {}) =>
  runCutpointInProcess(argv, options);

function refused(r: CliRun, code: string, exit = 1): void {
  expect({ code: r.code, stdout: r.stdout }, r.stderr).toEqual({ code: exit, stdout: '' });
  expect(r.stderr).toMatch(new RegExp(`^${code.replace(/\./g, '\\.')}: `, 'm'));
}

/** Lane heads 0..n-1 of `stream` as stored (undefined where there is none). */
const heads = (stream: string, n: number) =>
  Promise.all(
    Array.from({ length: n }, (_, partition) => rt.ports.authority.get(laneKeys.head({ stream, partition }))),
  );

describe('stream create: an existing stream keeps its shape', () => {
  it('another partition count is stream.exists_with_other_shape with nothing written; the same count reports the lanes as they stand', async () => {
    const created = await cli(['stream', 'create', 'orders', '--partitions', '2']);
    expect(created.code, created.stderr).toBe(0);
    const before = await heads('orders', 4);
    for (const n of ['1', '3']) {
      const r = await cli(['stream', 'create', 'orders', '--partitions', n]);
      refused(r, 'stream.exists_with_other_shape');
      expect(r.stderr).toContain(`stream orders already exists with 2 partitions, not ${n}`);
    }
    expect(await heads('orders', 4)).toEqual(before);
    const again = await cli(['stream', 'create', 'orders', '--partitions', '2']);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual({
      stream: 'orders',
      partitions: 2,
      attemptWindow: '7d',
      lanes: [0, 1].map((partition) => ({ partition, committedEnd: 0, trimOffset: 0 })),
    });
    expect(await heads('orders', 4)).toEqual(before);
  });

  it('another attempt window is stream.exists_with_other_shape with nothing written; a window without its unit or out of range is a usage error', async () => {
    const created = await cli(['stream', 'create', 'windowed', '--partitions', '2', '--attempt-window', '36h']);
    expect(created.code, created.stderr).toBe(0);
    expect(JSON.parse(created.stdout)).toMatchObject({ partitions: 2, attemptWindow: '36h' });
    expect((await heads('windowed', 2)).map((h) => h?.attemptWindowSeconds)).toEqual([129_600, 129_600]);
    const before = await heads('windowed', 3);
    for (const other of [[], ['--attempt-window', '7d'], ['--attempt-window', '2d']]) {
      const r = await cli(['stream', 'create', 'windowed', '--partitions', '2', ...other]);
      refused(r, 'stream.exists_with_other_shape');
      expect(r.stderr).toContain(`stream windowed already exists with attempt window 36h, not ${other[1] ?? '7d'}`);
    }
    for (const bad of ['36', '59m', '366d', '1.5h', '36h ']) {
      refused(
        await cli(['stream', 'create', 'windowed', '--partitions', '2', '--attempt-window', bad]),
        'cli.usage',
        2,
      );
      refused(
        await cli(['stream', 'create', `fresh-${bad.length}`, '--partitions', '1', '--attempt-window', bad]),
        'cli.usage',
        2,
      );
    }
    expect(await heads('windowed', 3)).toEqual(before);
    expect(await rt.ports.authority.get(laneKeys.head({ stream: 'fresh-2', partition: 0 }))).toBeUndefined();
    expect((await cli(['stream', 'create', 'windowed', '--partitions', '2', '--attempt-window', '1d12h'])).code).toBe(
      2,
    );
    const again = await cli(['stream', 'create', 'windowed', '--partitions', '2', '--attempt-window', '36h']);
    expect(again.code, again.stderr).toBe(0);
    const described = await cli(['stream', 'describe', 'windowed']);
    expect(JSON.parse(described.stdout).lanes.map((l: { attemptWindow: string }) => l.attemptWindow)).toEqual([
      '36h',
      '36h',
    ]);
    // A stream created before lanes had a window has the default, and is that shape.
    expect((await cli(['stream', 'create', 'orders', '--partitions', '2', '--attempt-window', '168h'])).code).toBe(0);
  });

  it('a stream whose heads do not name the count (created before they did) is measured by its lanes', async () => {
    for (const partition of [0, 1]) {
      const lane = { stream: 'legacy', partition };
      expect(
        (
          await rt.ports.authority.put(
            'test.seed',
            { ...laneKeys.head(lane), ...lane, committedEnd: 0, trimOffset: 0 },
            'absent',
          )
        ).status,
      ).toBe('APPLIED');
    }
    const before = await heads('legacy', 4);
    refused(await cli(['stream', 'create', 'legacy', '--partitions', '1']), 'stream.exists_with_other_shape');
    const more = await cli(['stream', 'create', 'legacy', '--partitions', '3']);
    refused(more, 'stream.exists_with_other_shape');
    expect(more.stderr).toContain('already exists with 2 partitions, not 3');
    expect((await cli(['stream', 'create', 'legacy', '--partitions', '2'])).code).toBe(0);
    expect(await heads('legacy', 4)).toEqual(before);
  });

  it('a create a crash cut short (lane 0 of 2 written) is completed by the same count and refused with another', async () => {
    const lane = { stream: 'halfway', partition: 0 };
    await rt.ports.authority.put(
      'test.seed',
      { ...laneKeys.head(lane), ...lane, partitions: 2, committedEnd: 0, trimOffset: 0 },
      'absent',
    );
    const other = await cli(['stream', 'create', 'halfway', '--partitions', '1']);
    refused(other, 'stream.exists_with_other_shape');
    expect(other.stderr).toContain('already exists with 2 partitions, not 1');
    expect((await heads('halfway', 2))[1]).toBeUndefined();
    const completed = await cli(['stream', 'create', 'halfway', '--partitions', '2']);
    expect(completed.code, completed.stderr).toBe(0);
    expect((await heads('halfway', 3)).map((h) => h?.partitions)).toEqual([2, 2, undefined]);
  });
});

describe('object put: a key whose path segments are not names', () => {
  it.each(['x/../docs/readme.txt', 'docs/./readme.txt', 'docs//readme.txt', '/docs/readme.txt', 'docs/', '..'])(
    '%s is objects.invalid_key before anything is written: no claim, no object',
    async (key) => {
      const r = await cli(['object', 'put', key], { stdin: 'x' });
      refused(r, 'objects.invalid_key');
      expect(await rt.ports.authority.get(objectClaimKey(key))).toBeUndefined();
      expect(await rt.ports.objects.head(key)).toBeUndefined();
    },
  );
});

describe('diagnostics never name where an internal endpoint listens', () => {
  it('a ClickHouse source and a DynamoDB Local that refuse connections: no host:port on stderr', async () => {
    const port = await closedPort();
    const input = JSON.stringify({ manifestText: publicationManifest(), selector: `${rt.manifestFile}#daily` });
    const flow = await cli(['flow', 'run', 'publish-clickhouse', '--input', input], {
      env: { CH_URL: `http://127.0.0.1:${port}`, CH_PUB_URL: `http://127.0.0.1:${port}` },
    });
    refused(flow, 'flow.execution_failed');
    expect(flow.stderr).toContain('ECONNREFUSED [redacted-endpoint]');
    // A runtime whose DynamoDB Local is gone (its daemon pid, this process, alive).
    const gone = join(rt.root, 'gone');
    await mkdir(gone, { recursive: true });
    const endpoint = `http://127.0.0.1:${port}`;
    await writeFile(
      join(gone, 'runtime.json'),
      JSON.stringify({
        pid: process.pid,
        dynamodbPid: process.pid,
        dynamodbEndpoint: endpoint,
        s3Endpoint: endpoint,
        region: 'us-east-1',
        startedAt: new Date().toISOString(),
      }),
    );
    const describe = await cli(['stream', 'describe', 'orders'], { env: { CUTPOINT_STATE_DIR: gone } });
    refused(describe, 'cutpoint.connection_refused');
    for (const r of [flow, describe]) {
      expect(r.stderr).not.toContain(`127.0.0.1:${port}`);
      expect(r.stderr).not.toContain(`localhost:${port}`);
    }
  }, 120_000);
});
