import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CUT_POINTS } from '../../src/cut-points.js';
import { GAMEDAY_FLOWS } from '../../src/gameday/gameday.js';
import type { GamedayReport } from '../../src/gameday/report.js';
import { REPO_ROOT } from '../../src/local/asl.js';
import { runCutpointInProcess, startCliRuntime, type CliRun, type CliRuntime } from '../support/cli-runtime.js';
import { seedSourceDirectory } from '../support/delivery-source.js';
import { openWarehouse, type Warehouse } from '../support/delivery-world.js';

/**
 * `cutpoint gameday` on the local runtime, as CI runs it: every cut point each drilled flow
 * crosses armed in turn (one kind each, rotated), each drill recovered as an operator would
 * (deliver-window: the automatic recovery flow, then the printed commands; stream-append:
 * stream-resolve-append, then the batch again; the lane's maintenance flows: the same input
 * again until it succeeds), and every invariant checked. The report is the command's own:
 * exit 0 only when every invariant held.
 */

const CH_ENV = 'TEST_GAMEDAY_CLICKHOUSE';
const PG_ENV = 'TEST_GAMEDAY_WAREHOUSE';
const manifestText = `version: 1
bindings:
  events_ch: { kind: clickhouse, url_env: ${CH_ENV} }
  warehouse: { kind: postgres, url_env: ${PG_ENV} }
routes:
  daily:
    source: { binding: events_ch, table: src.events, time_column: event_time, key_columns: [event_id] }
    window: { kind: fixed, start: "2025-11-02T00:00:00Z", end: "2025-11-03T00:00:00Z" }
    target: { binding: warehouse, table: dwh.events_gameday, key_columns: [event_id], mode: replace_window }
    quality: { unique_keys: true, not_null: [event_id, event_time] }
    chunk_rows: 40
    part_rows: 100
`;
const BASE = Date.parse('2025-11-01T00:00:00.000Z');
// 240 a day: the window's 240 rows in 3 parts of 2-3 chunks each.
const rows = Array.from({ length: 720 }, (_, k) => ({
  event_id: k + 1,
  event_time: BASE + (k + 1) * 360_000,
  region: k % 3 === 0 ? 'eu' : 'us',
  amount: (k % 1000) / 8,
  note: k % 2 === 0 ? null : `note ${k}`,
}));

let runtime: CliRuntime | undefined;
let warehouse: Warehouse;
let chDir = '';

beforeAll(async () => {
  runtime = await startCliRuntime('gameday', manifestText);
  chDir = join(runtime.root, 'clickhouse');
  await seedSourceDirectory(chDir, rows);
  warehouse = await openWarehouse({ tables: ['events_gameday'] });
}, 180_000);

afterAll(async () => {
  await warehouse?.close();
  await runtime?.stop();
});

function gameday(args: string[]): Promise<CliRun> {
  return runCutpointInProcess(['gameday', '--manifest', `${runtime!.manifestFile}#daily`, ...args], {
    cwd: runtime!.root,
    env: {
      CUTPOINT_STATE_DIR: runtime!.stateDir,
      [CH_ENV]: `chdb:${chDir}`,
      [PG_ENV]: warehouse.pgServer.connectionString,
    },
  });
}

/** A game day of a flow that needs no route (no --manifest): its report, once it held. */
async function routeFree(flow: string, kinds: string, extra: string[] = []): Promise<GamedayReport> {
  const r = await runCutpointInProcess(['gameday', '--flows', flow, '--kinds', kinds, ...extra], {
    cwd: runtime!.root,
    env: { CUTPOINT_STATE_DIR: runtime!.stateDir },
  });
  const report = JSON.parse(r.stdout) as GamedayReport;
  expect({ code: r.code, violations: report.violations, route: report.route }).toEqual({
    code: 0,
    violations: [],
    route: undefined,
  });
  return report;
}

/** The invariants each maintenance flow's drills check (maintenance-invariants.ts), beside fault-reached. */
const MAINTENANCE_CHECKS: Record<string, string[]> = {
  'stream-trim': ['trim-monotonic', 'lane-usable'],
  'stream-materialize': ['gen0-exact', 'gen0-mark', 'tasks-cleaned', 'lane-free'],
  'stream-compact': ['compaction-exact', 'compaction-mark', 'tasks-cleaned', 'lane-free'],
  'stream-gc': ['live-kept', 'collected', 'roots-settled', 'below-trim-refused', 'lane-free'],
  'stream-maintain': ['gen0-exact', 'compaction-exact', 'live-kept', 'collected', 'roots-settled', 'lane-free'],
};

/** The forward run's end (`<flow> STATUS[ ERROR][ → …]`): the trail's first entry after the lane's setup. */
const forwardOf = (d: { flow: string; trail: string[] }): string =>
  d.trail.find((t) => t.startsWith(`${d.flow} `) && !t.startsWith(`${d.flow} again`))!;

describe('cutpoint gameday (local runtime)', () => {
  it('drills every cut point each flow crosses, recovers each and every invariant holds', async () => {
    const r = await gameday([]);
    const report = JSON.parse(r.stdout) as GamedayReport;
    expect(report.violations).toEqual([]);
    expect(r.code).toBe(0);
    expect(new Set(report.drills.map((d) => d.flow))).toEqual(new Set(GAMEDAY_FLOWS));
    for (const flow of GAMEDAY_FLOWS) {
      const crossed = CUT_POINTS.filter((c) => c.flows.includes(flow)).map((c) => c.name);
      const drills = report.drills.filter((d) => d.flow === flow);
      expect(drills.map((d) => d.cutPoint)).toEqual(crossed);
      // Rotated: every kind drilled (stream-trim crosses one cut point).
      expect(new Set(drills.map((d) => d.kind)).size).toBe(Math.min(4, crossed.length));
    }
    for (const d of report.drills) {
      expect(d.fired, d.spec).toBeGreaterThan(0);
      const names = d.invariants.map((i) => i.name);
      if (d.flow in MAINTENANCE_CHECKS) {
        expect(d.finalState, d.trail.join('; ')).toBe('SUCCEEDED');
        expect(names).toEqual(
          expect.arrayContaining(['converged', 'repeat-safe', 'exactly-once', ...MAINTENANCE_CHECKS[d.flow]!]),
        );
      } else if (d.flow === 'stream-append') {
        expect(d.finalState, d.trail.join('; ')).toBe('KNOWN_COMMITTED');
        expect(names).toEqual(
          expect.arrayContaining(['converged', 'repeat-safe', 'exactly-once', 'attempts-settled', 'lane-usable']),
        );
      } else if (d.flow === 'commit-generation') {
        expect(['COMMITTED', 'ABORTED'], d.trail.join('; ')).toContain(d.finalState);
        expect(names).toEqual(expect.arrayContaining(['converged', 'one-outcome', 'head-at-winner']));
      } else {
        expect(['CUSTODY_RELEASED', 'RETIRED'], d.trail.join('; ')).toContain(d.finalState);
        expect(names).toEqual(
          expect.arrayContaining(
            d.finalState === 'CUSTODY_RELEASED' ? ['rows-exactly-once', 'one-receipt'] : ['nothing-published'],
          ),
        );
      }
    }
    // A range whose generation 0 aborted is passed and its WAL object restored, by stream-materialize and stream-maintain alike.
    for (const flow of ['stream-materialize', 'stream-maintain']) {
      const d = report.drills.find((x) => x.flow === flow && x.cutPoint === 'generation.abort.cas')!;
      expect(d.trail, flow).toContainEqual(expect.stringMatching(/^its exact bytes restored under wal\//));
      expect(d.held, flow).toBe(true);
    }
    expect(report.summary).toMatchObject({ drills: report.drills.length, held: report.drills.length, violated: 0 });
    // The bindings' values never leave the process.
    for (const text of [r.stdout, r.stderr]) {
      expect(text).not.toContain(warehouse.pgServer.connectionString);
      expect(text).not.toContain(`chdb:${chDir}`);
    }
  }, 600_000);

  it('commit-generation alone needs no route', async () => {
    const report = await routeFree('commit-generation', 'lose-response');
    // The abort's drill runs after another task won the slot: it proves its abort; every other commits.
    expect(report.drills.map((d) => [d.cutPoint, d.kind, d.finalState])).toEqual(
      CUT_POINTS.filter((c) => c.flows.includes('commit-generation')).map((c) => [
        c.name,
        'lose-response',
        c.name === 'generation.abort.cas' ? 'ABORTED' : 'COMMITTED',
      ]),
    );
  }, 300_000);

  it('stream-append alone, every kind: the lane another attempt suspended for the retire, an unknown outcome resolved, the batch acknowledged once', async () => {
    const report = await routeFree('stream-append', 'all');
    const crossed = CUT_POINTS.filter((c) => c.flows.includes('stream-append')).map((c) => c.name);
    expect(report.drills.map((d) => [d.cutPoint, d.finalState])).toEqual(
      crossed.flatMap((c) => Array.from({ length: 4 }, () => [c, 'KNOWN_COMMITTED'])),
    );
    for (const d of report.drills) {
      expect(d.fired, d.spec).toBeGreaterThan(0);
      // Only the retire's drill appends on a lane another attempt suspended first.
      const forward = d.trail.findIndex((t) => t.startsWith('append a0 '));
      expect(forward, d.trail.join('; ')).toBe(d.cutPoint === 'stream.append.retire' ? 1 : 0);
      if (forward === 1) expect(d.trail[0]).toMatch(/^append blocker SUCCEEDED → MAY_HAVE_COMMITTED$/);
      // An outcome left unknown (a failed execution, MAY_HAVE_COMMITTED) is resolved by its own attempt id.
      if (/→ (FAILED|MAY_HAVE_COMMITTED)$/.test(d.trail[forward]!))
        expect(
          d.trail.some((t) => /^resolve a0 SUCCEEDED → KNOWN_(NOT_)?COMMITTED$/.test(t)),
          d.spec,
        ).toBe(true);
    }
    // Every path is drilled: acknowledged at once, left unknown and resolved, refused and retired.
    const forwardAnswers = new Set(
      report.drills.map((d) => d.trail.find((t) => t.startsWith('append a0 '))!.split(' → ')[1]),
    );
    expect([...forwardAnswers].sort()).toEqual([
      'FAILED',
      'KNOWN_COMMITTED',
      'KNOWN_NOT_COMMITTED',
      'MAY_HAVE_COMMITTED',
    ]);
  }, 300_000);

  it('stream-trim alone, every kind: a CAS that never applied re-run, one whose answer was lost found applied, a lower target refused', async () => {
    const report = await routeFree('stream-trim', 'all');
    expect(report.drills.map((d) => [d.kind, forwardOf(d)])).toEqual([
      ['crash-before', 'stream-trim FAILED Cutpoint.WorkerCrashed'],
      ['crash-after', 'stream-trim SUCCEEDED → trim 4'],
      ['lose-response', 'stream-trim SUCCEEDED → trim 4'],
      ['fail', 'stream-trim FAILED Cutpoint.EffectFailed'],
    ]);
    for (const d of report.drills) {
      expect(d.trail).toContain('stream-trim again SUCCEEDED → trim 4');
      expect(d.trail).toContain('stream-trim back to 2 FAILED Stream.TrimRefused');
    }
  }, 300_000);

  it('stream-materialize alone, every step failing: the run stops at the range and the next resumes; an aborted range is passed and its WAL object restored', async () => {
    const report = await routeFree('stream-materialize', 'fail');
    for (const d of report.drills) {
      expect(d.fired, d.spec).toBeGreaterThan(0);
      // A failed task cleanup is kept for a later run, never failing this one; every other step stops the run.
      expect(forwardOf(d), d.spec).toMatch(
        d.cutPoint === 'generation.task.cleanup' ? /^stream-materialize SUCCEEDED/ : / FAILED Stream\.Gen0Incomplete$/,
      );
    }
    const aborted = report.drills.find((d) => d.cutPoint === 'generation.abort.cas')!;
    // The run that proves the abort passes the range and fails naming it; the next goes on.
    expect(aborted.trail.slice(-4)).toEqual([
      'stream-materialize again FAILED Stream.Gen0Incomplete',
      expect.stringMatching(/^its exact bytes restored under wal\//),
      'stream-materialize again SUCCEEDED → 0 range(s), mark 6',
      'stream-materialize once more SUCCEEDED → 0 range(s), mark 6',
    ]);
    expect(aborted.invariants).toContainEqual(
      expect.objectContaining({ name: 'gen0-exact', held: true, detail: expect.stringMatching(/, 1 passed with/) }),
    );
  }, 300_000);

  it('stream-compact alone, every answer lost: each found by exact identity; of two runs racing over one start, one generation aborted and that run re-run', async () => {
    const report = await routeFree('stream-compact', 'lose-response');
    for (const d of report.drills) {
      expect(d.fired, d.spec).toBeGreaterThan(0);
      if (d.cutPoint !== 'generation.abort.cas')
        expect(forwardOf(d), d.spec).toMatch(/^stream-compact SUCCEEDED → \[0, 6\) compacted$/);
    }
    const race = report.drills.find((d) => d.cutPoint === 'generation.abort.cas')!;
    const forward = race.trail.filter((t) => /^stream-compact (SUCCEEDED|FAILED)/.test(t)).slice(0, 2);
    expect(forward.sort()).toEqual([
      'stream-compact FAILED Stream.CompactionNotCommitted',
      expect.stringMatching(/^stream-compact SUCCEEDED → \[0, [46]\) compacted$/),
    ]);
  }, 300_000);

  it('stream-gc alone, kinds shifted: every fate collected at grace 0 after a fresh run, nothing live deleted, every root settled', async () => {
    const report = await routeFree('stream-gc', 'rotate', ['--seed', '2']);
    for (const d of report.drills) {
      expect(d.fired, d.spec).toBeGreaterThan(0);
      expect(d.invariants.find((i) => i.name === 'collected')?.detail).toBe('grace 0: only the 3 live copies left');
      expect(d.trail).toContain('stream-gc once more SUCCEEDED → 0 deleted');
    }
    // Kinds other than the full run's: every cut point drilled with another one.
    expect(report.drills.map((d) => d.kind)).toEqual([
      'lose-response',
      'fail',
      'crash-before',
      'crash-after',
      'lose-response',
      'fail',
      'crash-before',
      'crash-after',
    ]);
  }, 300_000);

  it('stream-maintain alone, kinds shifted: a child that failed ends the run incomplete and the next run finishes the lane; trimmed copies collected at the deployed grace', async () => {
    const report = await routeFree('stream-maintain', 'rotate', ['--seed', '2']);
    for (const d of report.drills) {
      expect(d.fired, d.spec).toBeGreaterThan(0);
      expect(forwardOf(d), d.spec).toMatch(
        /^stream-maintain (SUCCEEDED → MAINTAINED|FAILED Stream\.MaintenanceIncomplete)$/,
      );
      expect(d.invariants.find((i) => i.name === 'collected')?.detail).toMatch(/^every trimmed copy collected; /);
    }
    expect(report.drills.filter((d) => / FAILED /.test(forwardOf(d))).length).toBeGreaterThan(0);
  }, 300_000);

  it('refuses a bad --kinds, an undrilled flow and --stack without --aws before anything runs (exit 2)', async () => {
    for (const args of [
      ['--kinds', 'explode'],
      ['--flows', 'delivery-expire'],
      ['--stack', 'X'],
      ['--seed', '-1'],
    ]) {
      const r = await runCutpointInProcess(['gameday', '--manifest', 'x.yaml#daily', ...args], { cwd: REPO_ROOT });
      expect({ args, code: r.code, stdout: r.stdout }).toEqual({ args, code: 2, stdout: '' });
      expect(r.stderr).toMatch(/^cli\.usage: /);
    }
  });

  it('--aws without a region is refused before any stack, function or flow is touched (exit 1, nothing on stdout)', async () => {
    const r = await runCutpointInProcess(['gameday', '--manifest', `${runtime!.manifestFile}#daily`, '--aws'], {
      cwd: runtime!.root,
      env: { AWS_REGION: undefined, AWS_DEFAULT_REGION: undefined, AWS_PROFILE: undefined, HOME: runtime!.root },
    });
    expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 1, stdout: '' });
    expect(r.stderr).toMatch(/^aws\.region_missing: /m);
  });
});
