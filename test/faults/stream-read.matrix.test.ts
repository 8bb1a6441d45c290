import { beforeAll, describe, expect, it } from 'vitest';
import { CutpointError } from '../../src/domain/errors.js';
import type { FaultKind } from '../../src/domain/faults.js';
import { laneKeys, type IndexEntry } from '../../src/domain/stream.js';
import { compactLane } from '../../src/stream/compaction/compact-lane.js';
import { STREAM_CUT_POINTS } from '../../src/stream/cut-points.js';
import { readStream, type ReadResult } from '../../src/stream/read.js';
import { releaseQuarantine, type ReleaseResult } from '../../src/stream/read/quarantine-release.js';
import { freshStores, type TestStores } from '../support/emulators.js';
import { MATRIX_LANE, withKinds } from '../support/matrix-lane.js';
import { expectCompacted, laneWithRanges, textOf } from './stream-compaction-world.js';
import {
  overwrite,
  quarantineCount,
  quarantineItemOf,
  readAllOf,
  readWorld,
  withOffsets,
  type ReadWorld,
} from './stream-read-world.js';

/**
 * The read path's provider GET (stream.read.provider: a compacted, generation 0 or WAL copy) and the quarantine release
 * (stream.read.quarantine-release) × the fault kinds, one-shot and persistent. Invariant: a read returns
 * an exact prefix of the committed records from `from` with `next` right past it, or (nothing
 * read) a stable error (a CutpointError with a code), never a skip; the next read from `next`
 * continues exactly there; a provider failure never quarantines; a release either releases the exact item or
 * leaves it, and a re-run settles it; afterwards readers serve the restored copy.
 */
let stores: TestStores;
beforeAll(async () => {
  stores = await freshStores();
}, 120_000);

const ruleOf = (cut: string, kind: FaultKind, persistent: boolean) =>
  `${cut}:${kind === 'delay' ? 'delay=5' : kind}${persistent ? '*' : ''}`;

async function settle<T>(op: () => Promise<T>): Promise<{ value?: T; error?: unknown }> {
  return op().then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
}

function expectStable(error: unknown): void {
  expect(error).toBeInstanceOf(CutpointError);
  expect((error as CutpointError).code).toMatch(/^[a-z]+\.[a-z_]+$/);
}

const providerCases = [
  ...withKinds([false], 0).map(([p, k]) => [k, p] as const),
  ...withKinds([true], 3).map(([p, k]) => [k, p] as const),
];

describe(`stream.read.provider × fault kinds (${MATRIX_LANE})`, () => {
  it.each(providerCases)(
    '%s (persistent: %s): exact records or a stable error, nothing quarantined',
    async (kind, persistent) => {
      const w = await readWorld(stores, `prov-${kind}-${persistent ? 'p' : 'o'}`, [3, 2]);
      const { injector, outcome } = await readAllUnder(w, ruleOf(STREAM_CUT_POINTS.provider, kind, persistent));
      expect(injector.fired.length).toBeGreaterThan(0);
      if (outcome.error !== undefined) {
        expectStable(outcome.error);
        expect(
          persistent && kind !== 'delay',
          'a one-shot provider failure is absorbed by the bounded retry; a delay is no failure',
        ).toBe(true);
      } else {
        expect(outcome.value!.records).toEqual(withOffsets(w.expected));
        expect(outcome.value!.quarantined).toEqual([]);
      }
      expect(await quarantineCount(stores, w.lane)).toBe(0);
      expect((await readAllOf(stores, w.lane)).records).toEqual(withOffsets(w.expected));
    },
    120_000,
  );
});

/** The whole lane read with one fault rule armed (disarmed after): what fired and what the read gave. */
async function readAllUnder(
  w: ReadWorld,
  rule: string,
): Promise<{ injector: { fired: unknown[] }; outcome: { value?: ReadResult; error?: unknown } }> {
  const injector = stores.faults.arm(rule);
  try {
    return { injector, outcome: await settle(() => readAllOf(stores, w.lane)) };
  } finally {
    stores.faults.disarm();
  }
}

/** An exact prefix from `from`, `next` right past it, and a read from `next` returns the rest: never a skip. */
async function expectPrefixThenRest(w: ReadWorld, page: ReadResult): Promise<void> {
  expect(page.records).toEqual(withOffsets(w.expected).slice(0, page.records.length));
  expect(page.next).toBe(page.records.length);
  const rest = await readStream({ ...w.lane, from: page.next, maxRecords: 10_000 }, stores.ports);
  expect([...page.records, ...rest.records]).toEqual(withOffsets(w.expected));
}

describe(`stream.read.provider from the second range on × fault kinds (${MATRIX_LANE})`, () => {
  it.each(withKinds(['persistent from hit 2'], 1))(
    '%s, %s: the first range with `next` at the second, then the rest',
    async (_label, kind) => {
      const w = await readWorld(stores, `prov2-${kind}`, [3, 2]);
      const { injector, outcome } = await readAllUnder(
        w,
        `${STREAM_CUT_POINTS.provider}:${kind === 'delay' ? 'delay=5' : kind}@2*`,
      );
      expect(injector.fired.length).toBeGreaterThan(0);
      expect(outcome.error, 'records were read before the failed range: they are returned').toBeUndefined();
      expect(outcome.value!.records).toHaveLength(kind === 'delay' ? 5 : 3);
      await expectPrefixThenRest(w, outcome.value!);
      expect(outcome.value!.quarantined).toEqual([]);
      expect(await quarantineCount(stores, w.lane)).toBe(0);
    },
    120_000,
  );
});

/**
 * How far a provider fault reaches on a compacted lane (three ranges, one compacted copy
 * serving them first): the first GET only (the bounded retry absorbs it), both GETs of the
 * compacted copy (its retries spent: the per-range copies serve), or every GET.
 */
const COMPACTED_REACH = { 'first GET': '', 'the compacted copy': '*2', 'every GET': '*' } as const;
type CompactedReach = keyof typeof COMPACTED_REACH;
const RANGES = 3;

describe(`stream.read.provider on a compacted copy × fault kinds (${MATRIX_LANE})`, () => {
  it.each(withKinds(Object.keys(COMPACTED_REACH) as CompactedReach[]))(
    '%s, %s: retried, then a healthy same-view copy or a stable error; never a skip, nothing quarantined',
    async (reach, kind) => {
      const label = `cprov-${kind}-${reach.replace(/\W+/g, '')}`;
      const { lane, acknowledged } = await laneWithRanges(stores.ports, label, RANGES);
      const all = acknowledged.flatMap((a) => a.records);
      await compactLane(lane, stores.ports);
      await expectCompacted(stores.ports, lane, all, 0, all.length);

      const injector = stores.faults.arm(
        `${STREAM_CUT_POINTS.provider}:${kind === 'delay' ? 'delay=5' : kind}${COMPACTED_REACH[reach]}`,
      );
      let outcome: { value?: ReadResult; error?: unknown };
      try {
        outcome = await settle(() => readAllOf(stores, lane));
      } finally {
        stores.faults.disarm();
      }
      // The compacted copy is read first and through the provider cut point, like every other copy.
      expect(injector.fired[0], "the compacted copy's GET crosses stream.read.provider").toMatchObject({
        cutPoint: STREAM_CUT_POINTS.provider,
        hit: 1,
      });
      const gets = injector.hitCounts()[STREAM_CUT_POINTS.provider];
      if (kind === 'delay' || reach === 'first GET') {
        // A delay is no failure; a one-shot failure is absorbed by the retry: the compacted copy serves every range.
        expect(textOf(outcome.value!.records)).toEqual(all);
        expect(gets).toBe(kind === 'delay' ? 1 : 2);
      } else if (reach === 'the compacted copy') {
        // Both tries of the compacted copy failed: each range's own copy serves, exactly.
        expect(textOf(outcome.value!.records)).toEqual(all);
        expect(gets).toBe(2 + RANGES);
      } else {
        // Nothing serves and nothing was read: the provider failure leaves as itself.
        expectStable(outcome.error);
        expect(outcome.error).toMatchObject({
          name: 'Stream.ProviderUnavailable',
          code: 'stream.read_provider_unavailable',
        });
        // Two tries of the compacted copy, then two of each copy of the first range.
        const first = (await stores.ports.authority.get(
          laneKeys.index(lane, acknowledged[0]!.records.length),
        )) as unknown as IndexEntry;
        expect(gets).toBe(2 + 2 * (first.gen0Key ? 2 : 1));
      }
      if (outcome.value) expect(outcome.value.quarantined).toEqual([]);
      expect(await quarantineCount(stores, lane), 'a provider failure is no verdict on the bytes').toBe(0);
      expect(textOf((await readAllOf(stores, lane)).records)).toEqual(all);
    },
    120_000,
  );
});

describe(`stream.read.quarantine-release × fault kinds (${MATRIX_LANE})`, () => {
  it.each(withKinds([STREAM_CUT_POINTS.quarantineRelease]))(
    '%s: %s — released exactly once or left, a re-run settles it',
    async (cut, kind) => {
      const w = await readWorld(stores, `rel-${kind}`, [3]);
      const good = await overwrite(stores, w.first.gen0Key!);
      expect((await readAllOf(stores, w.lane)).quarantined).toEqual([
        { key: w.first.gen0Key, reason: 'checksum_mismatch' },
      ]);
      await overwrite(stores, w.first.gen0Key!, good);
      const input = { ...w.lane, objectKey: w.first.gen0Key };

      const injector = stores.faults.arm(ruleOf(cut, kind, false));
      let first: { value?: ReleaseResult; error?: unknown };
      try {
        first = await settle(() => releaseQuarantine(input, stores.ports));
      } finally {
        stores.faults.disarm();
      }
      expect(injector.fired).toHaveLength(1);
      if (first.error !== undefined) {
        expectStable(first.error);
        const again = await settle(() => releaseQuarantine(input, stores.ports));
        // The faulted delete landed (crash-after) or not (crash-before, fail, lose-request).
        if (again.error !== undefined) expect(again.error).toMatchObject({ code: 'stream.quarantine_not_found' });
        else expect(again.value).toMatchObject({ released: true });
      } else {
        expect(first.value).toMatchObject({ objectKey: w.first.gen0Key, released: true });
      }
      expect(await quarantineItemOf(stores, w.lane, w.first.gen0Key!)).toBeUndefined();
      // Readers serve gen0 again: with the WAL copy bad, only gen0 can serve the exact records.
      await overwrite(stores, w.first.walKey);
      const read = await readStream({ ...w.lane, from: 0 }, stores.ports);
      expect(read.records).toEqual(withOffsets(w.expected));
      expect(read.quarantined).toEqual([]);
    },
    120_000,
  );
});
