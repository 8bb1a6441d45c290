import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run as runProbeWorker } from '../../src/adapters/reader-process/probe-worker.js';
import { classifyClickHouseError } from '../../src/domain/clickhouse-errors.js';
import { retryRead } from '../../src/engine/read-retry.js';
import { readInvocation } from '../../src/delivery/journal/records.js';
import { readCapsule } from '../../src/quality/capsule-store.js';
import { observeTarget } from '../../src/quality/steps/observe-target.js';
import { openObserveWorld, type ObserveWorld } from '../fixtures/quality/observe-world.js';
import { publicationManifest } from '../support/publication-world.js';

/**
 * The sealed KEEPER_NO_NODE read retry reaches the target observation's reads
 * (docs/rules.md#observation-failures): the bounded reader's child runs each read-only
 * statement through `retryRead` with the policy prepared.json sealed, never the route given
 * later. Real errors only: the route's assertion reads a flag over HTTP with ClickHouse's own
 * `url()` and raises a real structured Code 999 through `throwIf` while the flag reads 1 —
 * with the "Coordination::Exception: " prefix, so the client leaves the message a Keeper
 * error carries ("No node, path: …"; test/integration/clickhouse-errors.test.ts). The flag
 * reads 1 for as many fetches as the test arms, then 0: "fails once, then succeeds".
 */

interface Flag {
  /** The next `n` fetches read 1 (the probe raises 999 "No node"); every other fetch reads 0. */
  arm(n: number): void;
  /** GET fetches since the last arm: one per attempt of a statement that reads the flag. */
  fetches(): number;
  /** A `throwIf` raising the Keeper "No node" error while the flag reads 1. */
  noNode: string;
  close(): Promise<void>;
}

async function openFlag(): Promise<Flag> {
  let armed = 0;
  let fetches = 0;
  const server: Server = createServer((request, response) => {
    // url() asks HEAD first (the size), then GETs the body: only the GET is an attempt's read.
    if (request.method === 'GET') {
      fetches += 1;
      response.end(armed > 0 ? (armed--, '1\n') : '0\n');
    } else response.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    arm(n) {
      armed = n;
      fetches = 0;
    },
    fetches: () => fetches,
    noNode: `throwIf((SELECT any(f) FROM url('http://127.0.0.1:${port}/flag', 'CSV', 'f UInt8')) = 1, 'Coordination::Exception: No node, path: /cutpoint', toInt32(999))`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

let world: ObserveWorld;
let flag: Flag;
beforeAll(async () => {
  flag = await openFlag();
  world = await openObserveWorld();
}, 180_000);
afterAll(async () => {
  await world?.close();
  await flag?.close();
});

const RETRY = { max_attempts: 2, max_elapsed_ms: 5000 };
const CUSTOM_CODE = 'SETTINGS allow_custom_error_code_in_throwif = 1';
/** An assertion that passes (0 rows) unless the flag raises 999 "No node". */
const assertion = () => `SELECT count() FROM {relation} WHERE ${flag.noNode} = 1 ${CUSTOM_CODE}`;

async function capsuleOf(world: ObserveWorld, ref: { targetId: string; invocationId: string }) {
  const capsule = await readCapsule(world.stores.ports, ref);
  if (!capsule || capsule.schema !== 2) throw new Error('expected a v2 capsule');
  return capsule;
}

describe('the sealed KEEPER_NO_NODE retry in the target observation (docs/rules.md#observation-failures)', () => {
  it('with the policy sealed, a probe whose first attempt raises 999 "No node" and whose second succeeds completes', async () => {
    const { deps, begun, ref } = await world.published({ assertion: assertion(), retry: RETRY });
    flag.arm(1);
    expect(await observeTarget(begun, deps, await world.reader(deps))).toMatchObject({
      capsuleState: 'COMPLETE',
      outcome: 'COMPLETE',
      remoteTermination: 'not_applicable',
    });
    expect(flag.fetches()).toBe(2); // the failed attempt, then the retry
    expect((await capsuleOf(world, ref)).lastObservation).toMatchObject({
      outcome: 'COMPLETE',
      code: 'quality.complete',
    });
    expect((await readInvocation(deps.ports, ref)).facts.dispatch?.count).toBe(1);
  });

  it('with the policy sealed, the retry stops at max_attempts: a flag failing twice leaves TARGET_PENDING with KEEPER_NO_NODE', async () => {
    const { deps, begun, ref } = await world.published({ assertion: assertion(), retry: RETRY });
    flag.arm(2);
    expect(await observeTarget(begun, deps, await world.reader(deps))).toMatchObject({ outcome: 'TARGET_PENDING' });
    expect(flag.fetches()).toBe(2);
    expect((await capsuleOf(world, ref)).lastObservation).toMatchObject({
      errorClass: 'KEEPER_NO_NODE',
      code: 'quality.target_observation_keeper_no_node',
    });
  });

  it('without the policy the same failure is attempted once: TARGET_PENDING with KEEPER_NO_NODE, the operation retained; a later observation completes', async () => {
    const { deps, begun, ref } = await world.published({ assertion: assertion() });
    flag.arm(1);
    expect(await observeTarget(begun, deps, await world.reader(deps))).toMatchObject({
      state: 'PUBLISHED',
      capsuleState: 'TARGET_PENDING',
      outcome: 'TARGET_PENDING',
    });
    expect(flag.fetches()).toBe(1);
    const pending = await capsuleOf(world, ref);
    expect(pending).toMatchObject({
      state: 'TARGET_PENDING',
      lastObservation: {
        outcome: 'TARGET_PENDING',
        errorClass: 'KEEPER_NO_NODE',
        code: 'quality.target_observation_keeper_no_node',
      },
    });
    expect(pending.reader).toBeUndefined();
    expect(await observeTarget(begun, deps, await world.reader(deps))).toMatchObject({ outcome: 'COMPLETE' });
  });

  it('the sealed policy decides, not the route given later: sealed on and observed under a route without it retries; sealed off and observed under a route with it does not', async () => {
    const sealedOn = await world.published({ assertion: assertion(), retry: RETRY });
    const withoutRetry = world.deps(publicationManifest({ assertion: assertion(), table: sealedOn.table }));
    expect(withoutRetry.route.route.quality.governance?.keeperNoNodeRetry).toBeUndefined();
    flag.arm(1);
    expect(await observeTarget(sealedOn.begun, withoutRetry, await world.reader(withoutRetry))).toMatchObject({
      outcome: 'COMPLETE',
    });
    expect(flag.fetches()).toBe(2);

    const sealedOff = await world.published({ assertion: assertion() });
    const withRetry = world.deps(publicationManifest({ assertion: assertion(), table: sealedOff.table, retry: RETRY }));
    expect(withRetry.route.route.quality.governance?.keeperNoNodeRetry).toEqual({ maxAttempts: 2, maxElapsedMs: 5000 });
    flag.arm(1);
    expect(await observeTarget(sealedOff.begun, withRetry, await world.reader(withRetry))).toMatchObject({
      outcome: 'TARGET_PENDING',
    });
    expect(flag.fetches()).toBe(1);
    expect((await capsuleOf(world, sealedOff.ref)).lastObservation).toMatchObject({ errorClass: 'KEEPER_NO_NODE' });
  });

  it('a mutation is never retried: an INSERT whose SELECT would raise 999 "No node" is refused before any attempt, under any policy', async () => {
    await world.ch.client.command({ query: 'CREATE TABLE pub.retry_sink (x UInt8) ENGINE = MergeTree ORDER BY x' });
    const insert = `INSERT INTO pub.retry_sink SELECT ${flag.noNode} ${CUSTOM_CODE}`;
    flag.arm(1);
    const refused = await retryRead(
      'mutation',
      { max_attempts: 3, max_elapsed_ms: 10_000 },
      new AbortController().signal,
      (signal) => world.ch.client.command({ query: insert, abort_signal: signal }),
      classifyClickHouseError,
    ).catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: 'cutpoint.retry_not_read_only' });
    expect(flag.fetches()).toBe(0);
    const rows = await world.ch.client.query({
      query: 'SELECT count() AS n FROM pub.retry_sink',
      format: 'JSONEachRow',
    });
    expect(await rows.json()).toEqual([{ n: '0' }]);
  });

  it('the probe worker refuses a retry outside the policy bounds before it connects', async () => {
    const input = {
      url: 'http://127.0.0.1:9',
      relation: { database: 'pub', table: 'events' },
      probes: [{ name: 'p', sql: 'SELECT 1' }],
      maxExecutionSeconds: 5,
    };
    for (const retry of [{ maxAttempts: 4, maxElapsedMs: 100 }, { maxAttempts: 2, maxElapsedMs: 0 }, null]) {
      await expect(runProbeWorker({ ...input, retry }, new AbortController().signal)).rejects.toMatchObject({
        code: 'quality.reader_input_invalid',
      });
    }
  });
});
