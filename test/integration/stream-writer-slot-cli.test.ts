import { describe, expect, it } from 'vitest';
import { activeSession } from '../../src/cli/session-store.js';
import { LaneWriter } from '../../src/stream/append/lane-writer.js';
import { useCliRuntime } from '../support/cli-runtime.js';
import { StreamLanes } from '../support/stream-lanes.js';

/**
 * `cutpoint stream resolve --writer` as an operator meets it (docs/stream-log.md "The stream log"): a
 * producer embedding a LaneWriter on this runtime's lane died without closing it; `stream
 * append` is refused naming the writer and the command, `stream describe` shows the slot,
 * the resolve prints each attempt's outcome and releases the lane, and appends go on.
 */
const { runtime, cli } = useCliRuntime('writer-slot-cli');
const lanes = new StreamLanes(runtime, cli);

describe('stream resolve --writer', () => {
  it("settles a dead writer's attempts, prints each outcome, releases the lane; stream append works again", async () => {
    const lane = await lanes.owned(1);
    const writer = new LaneWriter(runtime().ports, lane.ref, await activeSession(lane.ref, 'local'));
    const attemptId = writer.nextAttemptId();
    expect(await writer.append([new TextEncoder().encode('w')], attemptId)).toMatchObject({
      status: 'KNOWN_COMMITTED',
      start: 2,
      end: 3,
    });
    // The producer's process dies here: the writer is never closed.

    const refused = await cli(lane.args('append', '--attempt', 'a1'), '', 'x\n');
    expect(refused.code, refused.stderr).toBe(1);
    expect(refused.stderr).toMatch(/^stream\.not_committed: Stream\.LaneSuspended; .*stream resolve --writer/m);
    const described = JSON.parse((await lanes.ok(['stream', 'describe', lane.stream])).stdout) as {
      lanes: Array<{ writer?: unknown }>;
    };
    expect(described.lanes[0]!.writer).toEqual({ id: writer.writerId, epoch: 1 });

    const resolved = await lanes.ok(lane.args('resolve', '--writer', writer.writerId));
    expect(JSON.parse(resolved.stdout)).toEqual({
      ...lane.ref,
      writerId: writer.writerId,
      attempts: [{ status: 'KNOWN_COMMITTED', ...lane.ref, attemptId, recordCount: 1, start: 2, end: 3 }],
      released: true,
    });
    // Run again (the same execution name finds the same execution): the same answer.
    expect(JSON.parse((await lanes.ok(lane.args('resolve', '--writer', writer.writerId))).stdout)).toEqual(
      JSON.parse(resolved.stdout),
    );
    expect(JSON.parse((await lanes.ok(lane.args('append', '--attempt', 'a2'), 'y\n')).stdout)).toMatchObject({
      status: 'KNOWN_COMMITTED',
      start: 3,
      end: 4,
    });
  });

  it('--writer and --attempt together, or a writer id that is none, are refused before anything runs', async () => {
    const lane = await lanes.owned();
    const both = await cli(lane.args('resolve', '--attempt', 'a1', '--writer', '3f9c1a7e'));
    expect({ code: both.code, stdout: both.stdout }).toEqual({ code: 2, stdout: '' });
    expect(both.stderr).toContain('--attempt and --writer cannot be combined');
    const bad = await cli(lane.args('resolve', '--writer', 'w3f9c1a7e'));
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/^stream\.invalid_writer: /m);
  });
});
