import { describe, expect, it } from 'vitest';
import { graceDeadline } from '../../src/stream/gc/liveness.js';
import { countFate, countPage, pagesFromEnv, runOf } from '../../src/stream/gc/state.js';

/** Pure rules of issue #11's GC additions: where a grace starts, how fates are counted, the page budget. */
describe('GC fates and budget (pure rules)', () => {
  const firstSeen = '2026-01-01T00:00:00.000Z';

  it("a SUPERSEDED copy's grace runs from the compaction's commit; other fates and old records from first seen", () => {
    const committed = '2026-01-02T00:00:00.000Z';
    expect(graceDeadline({ fate: 'SUPERSEDED', graceFrom: committed }, firstSeen, 600).toISOString()).toBe(
      '2026-01-02T00:10:00.000Z',
    );
    expect(graceDeadline({ fate: 'SUPERSEDED' }, firstSeen, 600).toISOString(), 'a record without compactedAt').toBe(
      '2026-01-01T00:10:00.000Z',
    );
    expect(graceDeadline({ fate: 'SUPERSEDED', graceFrom: 'not a date' }, firstSeen, 600).toISOString()).toBe(
      '2026-01-01T00:10:00.000Z',
    );
    expect(graceDeadline({ fate: 'DEAD', graceFrom: committed }, firstSeen, 600).toISOString()).toBe(
      '2026-01-01T00:10:00.000Z',
    );
  });

  it("fates are counted, compactions' outputs also on their own", () => {
    const { totals } = runOf({ stream: 's', partition: 0 }, 60);
    countFate(totals, 'TRIMMED', true);
    countFate(totals, 'DEAD', true);
    countFate(totals, 'DEAD', false);
    countFate(totals, 'SUPERSEDED', false);
    countFate(totals, 'LIVE', true);
    countFate(totals, 'MAY_COMMIT', true);
    expect(totals).toMatchObject({
      trimmed: 1,
      dead: 2,
      superseded: 1,
      live: 1,
      mayCommit: 1,
      compacted: { trimmed: 1, dead: 1, live: 1, mayCommit: 1 },
    });
  });

  it('an execution spends its pages; a continuation keeps its cursors; a budget out of range is refused', () => {
    const run = runOf({ stream: 's', partition: 0, pagesPerExecution: 2 }, 60);
    countPage(run);
    expect(run.execution).toEqual({ pages: 1, spent: false });
    countPage(run);
    expect(run.execution).toEqual({ pages: 2, spent: true });
    run.scan = { prefix: 0, after: 'wal/s/0/x', done: false };
    const next = runOf(JSON.parse(JSON.stringify({ ...run, execution: { pages: 0, spent: false } })), 60);
    expect(next).toMatchObject({
      scan: { after: 'wal/s/0/x' },
      pagesPerExecution: 2,
      execution: { pages: 0, spent: false },
    });
    for (const bad of [0, 201, 1.5, '2']) {
      expect(() => runOf({ stream: 's', partition: 0, pagesPerExecution: bad }, 60)).toThrow(
        expect.objectContaining({ code: 'stream.invalid_gc_pages' }),
      );
    }
    expect(() => runOf({ ...run, pagesPerExecution: 500 }, 60)).toThrow(
      expect.objectContaining({ code: 'stream.invalid_gc_pages' }),
    );
    expect(pagesFromEnv({})).toBeUndefined();
    expect(pagesFromEnv({ CUTPOINT_GC_PAGES: '7' })).toBe(7);
    for (const bad of ['0', '201', '1.5', 'x', '-1', ' 7 ', '0x7', 'Infinity', '7e0'])
      expect(() => pagesFromEnv({ CUTPOINT_GC_PAGES: bad }), bad).toThrow(
        expect.objectContaining({ code: 'stream.invalid_gc_pages' }),
      );
  });
});
