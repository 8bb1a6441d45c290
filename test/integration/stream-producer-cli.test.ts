import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { laneKeys, type LaneHead } from '../../src/domain/stream.js';
import { REPO_ROOT } from '../../src/local/asl.js';
import { readStream } from '../../src/stream/read.js';
import { runCutpointInProcess, startCliRuntime, type CliRun, type CliRuntime } from '../support/cli-runtime.js';

/**
 * `cutpoint stream append --from FILE.jsonl` through the CLI's `main` in this process,
 * against a local runtime of its own: a 50,000-line file ends with every record readable
 * in order and the summary's counts exact; a re-run appends nothing twice; a group that
 * may have committed stops the file with exactly which lines committed; a bad file
 * changes nothing.
 */
let runtime: CliRuntime;
beforeAll(async () => {
  runtime = await startCliRuntime('stream-from', '');
}, 180_000);
afterAll(async () => {
  await runtime?.stop();
});

const cutpoint = (args: string[], faults = ''): Promise<CliRun> =>
  runCutpointInProcess(args, {
    cwd: REPO_ROOT,
    env: { CUTPOINT_STATE_DIR: runtime.stateDir, CUTPOINT_FAULTS: faults },
  });

const diagnostic = (stderr: string) =>
  stderr
    .split('\n')
    .filter((l) => l && !l.startsWith('cutpoint: '))
    .join('\n');

async function ownedStream(stream: string): Promise<void> {
  for (const args of [
    ['stream', 'create', stream, '--partitions', '1'],
    ['stream', 'takeover', stream, '--partition', '0'],
  ]) {
    const r = await cutpoint(args);
    expect(r.code, r.stderr).toBe(0);
  }
}

async function jsonl(name: string, count: number): Promise<{ file: string; lines: string[] }> {
  const lines = Array.from({ length: count }, (_, n) =>
    JSON.stringify({ n, id: `${name}-${n}`, pad: 'x'.repeat(n % 17) }),
  );
  const file = join(runtime.root, `${name}.jsonl`);
  await writeFile(file, `${lines.join('\n')}\n`);
  return { file, lines };
}

async function lane(stream: string): Promise<{ head: LaneHead; records: string[] }> {
  const ref = { stream, partition: 0 };
  const head = (await runtime.ports.authority.get(laneKeys.head(ref))) as unknown as LaneHead;
  const records: string[] = [];
  for (let from = 0; from < head.committedEnd;) {
    const page = await readStream({ ...ref, from, maxRecords: 5000 }, runtime.ports);
    records.push(...page.records.map((r) => Buffer.from(r.data, 'base64').toString()));
    from = page.next;
  }
  return { head, records };
}

describe('cutpoint stream append --from FILE.jsonl', () => {
  it('50,000 records: all readable in order, the summary exact; a re-run with the same --attempt appends nothing twice', async () => {
    await ownedStream('bulk');
    const { file, lines } = await jsonl('bulk', 50_000);
    const args = [
      'stream',
      'append',
      'bulk',
      '--partition',
      '0',
      '--attempt',
      'load1',
      '--from',
      file,
      '--max-records',
      '10000',
    ];
    const r = await cutpoint(args);
    expect(r.code, r.stderr).toBe(0);
    const summary = JSON.parse(r.stdout) as Record<string, unknown>;
    const bytes = lines.reduce((s, l) => s + Buffer.byteLength(l), 0);
    expect(summary).toEqual({
      stream: 'bulk',
      partition: 0,
      file,
      outcome: 'KNOWN_COMMITTED',
      records: 50_000,
      bytes,
      groups: 5,
      attemptPrefix: 'load1',
      firstOffset: 0,
      lastOffset: 49_999,
      ranges: [{ start: 0, end: 50_000, firstLine: 1, lastLine: 50_000 }],
    });
    expect(r.stderr).toMatch(/appended 50000\/50000 records .* in 5 groups/);
    const after = await lane('bulk');
    expect(after.head.committedEnd).toBe(50_000);
    expect(after.records).toEqual(lines);

    const again = await cutpoint(args);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual(summary);
    expect((await lane('bulk')).head.committedEnd).toBe(50_000);
  });

  it('a group that may have committed stops the file: the refusal names the committed lines and offsets, the group to resolve, the lines never sent', async () => {
    await ownedStream('halt');
    const { file, lines } = await jsonl('halt', 5000);
    const r = await cutpoint(
      ['stream', 'append', 'halt', '--partition', '0', '--attempt', 'h1', '--from', file, '--max-records', '1000'],
      'stream.append.head-cas:lose-request@3*',
    );
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout).toBe('');
    const line = diagnostic(r.stderr);
    expect(line).toMatch(/^stream\.may_have_committed: /);
    expect(line).toContain('lines 1–2000 at offsets [0, 2000) committed (2 groups, attempts h1-g0…g1)');
    expect(line).toContain('lines 2001–3000 (attempt h1-g2) may have committed');
    expect(line).toContain('cutpoint stream resolve halt --partition 0 --attempt h1-g2');
    expect(line).toContain('lines 3001–5000 were not sent');
    expect(line.split('\n')).toHaveLength(1);

    const resolved = await cutpoint(['stream', 'resolve', 'halt', '--partition', '0', '--attempt', 'h1-g2']);
    expect(resolved.code, resolved.stderr).toBe(0);
    expect(JSON.parse(resolved.stdout)).toMatchObject({ status: 'KNOWN_NOT_COMMITTED' });
    const after = await lane('halt');
    expect(after.head.committedEnd).toBe(2000);
    expect(after.records).toEqual(lines.slice(0, 2000));
  });

  it('a bad file is refused before anything is appended; grammar errors exit 2', async () => {
    await ownedStream('bad');
    const file = join(runtime.root, 'bad.jsonl');
    await writeFile(file, '{"a":1}\n{"a":2}\nnot json\n{"a":4}\n');
    const r = await cutpoint(['stream', 'append', 'bad', '--partition', '0', '--attempt', 'b1', '--from', file]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(diagnostic(r.stderr)).toBe('stream.invalid_jsonl: line 3 is not one JSON value; nothing was appended');
    const missing = await cutpoint([
      'stream',
      'append',
      'bad',
      '--partition',
      '0',
      '--attempt',
      'b1',
      '--from',
      join(runtime.root, 'nope.jsonl'),
    ]);
    expect(diagnostic(missing.stderr)).toMatch(/^cli\.file_not_found: /);
    const knob = await cutpoint([
      'stream',
      'append',
      'bad',
      '--partition',
      '0',
      '--attempt',
      'b1',
      '--from',
      file,
      '--max-records',
      '0',
    ]);
    // A value outside the option's range is a usage error (exit 2) naming the producer's code.
    expect([knob.code, diagnostic(knob.stderr)]).toEqual([
      2,
      expect.stringMatching(
        /^cli\.usage: --max-records\/--max-bytes: stream\.producer_invalid_knob: maxRecords must be/,
      ),
    ]);
    expect((await lane('bad')).head.committedEnd).toBe(0);
    for (const extra of [
      ['--file', file],
      ['--input-format', 'raw'],
      ['--format', 'raw'],
      ['--max-bytes', 'x'],
    ]) {
      const usage = await cutpoint([
        'stream',
        'append',
        'bad',
        '--partition',
        '0',
        '--attempt',
        'b1',
        '--from',
        file,
        ...extra,
      ]);
      expect(usage.code, usage.stderr).toBe(2);
      expect(usage.stdout).toBe('');
    }
    const noFrom = await cutpoint([
      'stream',
      'append',
      'bad',
      '--partition',
      '0',
      '--attempt',
      'b1',
      '--max-records',
      '5',
    ]);
    expect(noFrom.code).toBe(2);
  });
});
