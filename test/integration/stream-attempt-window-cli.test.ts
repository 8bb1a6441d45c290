import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { LaneRef } from '../../src/domain/stream.js';
import { activeSession } from '../../src/cli/session-store.js';
import { appendBatch } from '../../src/stream/append-batch.js';
import { useCliRuntime, type CliRun } from '../support/cli-runtime.js';
import { MovableClock } from '../faults/stream-gc-world.js';
import { laneSnapshot } from '../support/stream-fixture.js';

/**
 * `cutpoint stream append` of a time-marked attempt past the lane's attempt window (docs/stream-log.md
 * "The stream log"): a re-run of a batch the lane committed eight days ago, one batch from
 * stdin or a file through the producer, is refused with stream.attempt_expired and writes
 * nothing — never appended a second time, and never advised to append under a new attempt.
 */
const { runtime, cli } = useCliRuntime('attempt-window');
const DAY = 86_400_000;

function ok(r: CliRun): Record<string, unknown> {
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

/** The one diagnostic line on stderr (progress lines start with `cutpoint: `). */
const diagnostic = (r: CliRun) =>
  r.stderr
    .split('\n')
    .filter((line) => line && !line.startsWith('cutpoint: '))
    .join('\n');

describe('cutpoint stream append past the attempt window', () => {
  it(
    'a re-run of a batch committed 8 days ago is stream.attempt_expired with nothing written, for one batch and for a file',
    { timeout: 240_000 },
    async () => {
      ok(await cli(['stream', 'create', 'clicks', '--partitions', '1']));
      ok(await cli(['stream', 'takeover', 'clicks', '--partition', '0', '--owner', 'ops@test']));
      const lane: LaneRef = { stream: 'clicks', partition: 0 };
      const fence = await activeSession(lane, 'local');
      // Eight days ago, on that day's clock: `clicks.t<then>` and the file's first group committed.
      const clock = new MovableClock();
      clock.advance(-8 * DAY);
      const then = { ...runtime().ports, clock };
      const batch = `clicks.t${clock.now().getTime()}`;
      const prefix = `file.t${clock.now().getTime()}`;
      const encode = (rs: string[]) => rs.map((r) => Buffer.from(r));
      expect(
        await appendBatch({ ...lane, attemptId: batch, session: fence, records: encode(['one', 'two']) }, then),
      ).toMatchObject({ status: 'KNOWN_COMMITTED', start: 0, end: 2 });
      expect(
        await appendBatch(
          { ...lane, attemptId: `${prefix}-g0`, session: fence, records: encode(['{"n":1}', '{"n":2}']) },
          then,
        ),
      ).toMatchObject({ status: 'KNOWN_COMMITTED', start: 2, end: 4 });
      const before = await laneSnapshot(runtime().ports, lane);

      const rerun = await cli(['stream', 'append', 'clicks', '--partition', '0', '--attempt', batch], '', 'one\ntwo\n');
      expect(rerun).toMatchObject({ code: 1, stdout: '' });
      expect(diagnostic(rerun)).toMatch(/^stream\.attempt_expired: .*attempt window of 7d.*commit records/);

      const file = join(runtime().root, 'clicks.jsonl');
      await writeFile(file, '{"n":1}\n{"n":2}\n');
      const fromFile = await cli([
        'stream',
        'append',
        'clicks',
        '--partition',
        '0',
        '--attempt',
        prefix,
        '--from',
        file,
        '--max-records',
        '2',
      ]);
      expect(fromFile).toMatchObject({ code: 1, stdout: '' });
      const said = diagnostic(fromFile);
      expect(said).toMatch(/^stream\.attempt_expired: /);
      expect(said).toContain('commit records');
      // Past the window the lines may have committed long ago: no advice to append them under a new attempt.
      expect(said).not.toContain('new --attempt');
      expect(await laneSnapshot(runtime().ports, lane)).toEqual(before);

      // Resolve of the expired batch reports what its evidence proves (its WAL object is still there): committed, nothing spent.
      expect(ok(await cli(['stream', 'resolve', 'clicks', '--partition', '0', '--attempt', batch]))).toMatchObject({
        status: 'KNOWN_COMMITTED',
        start: 0,
        end: 2,
      });
      expect((await laneSnapshot(runtime().ports, lane)).items.filter((i) => i.sk.startsWith('spent#'))).toEqual([]);
      // A fresh attempt appends as before.
      expect(
        ok(
          await cli(
            ['stream', 'append', 'clicks', '--partition', '0', '--attempt', `clicks.t${Date.now()}`],
            '',
            'three\n',
          ),
        ),
      ).toMatchObject({ status: 'KNOWN_COMMITTED', start: 4, end: 5 });
    },
  );
});
