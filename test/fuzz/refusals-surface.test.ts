import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { inertFaults } from '../../src/adapters/fault-injector.js';
import { dispatchRecovery } from '../../src/recovery/dispatch.js';
import { mutations, outputViolations } from '../support/fuzz-cli.js';
import { fuzzSuite, FUZZ_SEED, PROPERTY_MS, runs } from '../support/fuzz-suite.js';
import { GROUP, GROUP_POSITION, LAKE, STREAM } from '../support/fuzz-world.js';
import { LocalFlowExecutions } from '../support/local-executions.js';
import { recordingNotifier } from '../support/recording-notifier.js';
import { awsOnlyFlagCases, awsOptionCases } from './aws-cases.js';
import { partsCases } from './delivery-cases.js';
import { flowSurfaceCases } from './flow-surface-cases.js';
import { otherCommandCases, qualityCases } from './quality-cases.js';
import { dispatchCases, validRequest } from './recovery-cases.js';
import { appendFromCases, cursorCases, laneOpsCases, maintenanceCases } from './stream-ops-cases.js';

/**
 * The net of issue 8 over the surface added since (issue 13): the stream's cursors,
 * retention policy, collection, quarantine, compaction, materialization and file appends;
 * the quality commands; cost, faults list, local up and demo; the --aws options; the flow
 * inputs of the newer state machines; delivery with parts; and the recovery dispatcher's
 * input. Same rules as refusals.test.ts (test/support/fuzz-cli.ts): every generated case
 * is invalid by construction and must be refused — exit 1 or 2, empty stdout, one stable
 * diagnostic code, no stack, secret or session id — with NOTHING mutated in a world that
 * now also holds a consumer group's cursor and session, a retention policy, and the
 * embedded ClickHouse's catalogue. A second file so the two vitest workers share the net.
 */

const suite = fuzzSuite('test/fuzz/refusals-surface.test.ts', async ({ world }) => {
  const snap = await world.snapshot();
  // Something to damage for every new command: the cursor and its session, the policy, ClickHouse's tables.
  expect(snap.authority).toContain(`cursor#${GROUP}`);
  expect(snap.authority).toContain(`"groups":{"L":[{"S":"${GROUP}"}]}`);
  expect(snap.sessions).toContain(`cursors/${STREAM}/0/${GROUP}.json`);
  expect(snap.clickhouse).toContain('"database":"src"');
  expect(snap.authority).toMatch(new RegExp(`"position":\\{"N":"${GROUP_POSITION}"\\}`));
});
const seed = FUZZ_SEED;
const T = PROPERTY_MS;

describe(`every invalid command of the newer surface is refused and mutates nothing (seed ${seed})`, () => {
  it(
    'stream consume / cursors / seek / gc / leases / quarantine / compact / materialize: lanes, flags, positionals',
    () => suite.runner.property('stream-lane-ops', laneOpsCases(), runs(120), seed),
    T,
  );
  it(
    'stream consume / seek / policy: groups, knobs, confirmation, seeks outside the lane',
    () => suite.runner.property('stream-cursors', cursorCases(suite.world), runs(90), seed),
    T,
  );
  it(
    'stream gc / quarantine / compact / materialize: grace, release keys, knobs out of range',
    () => suite.runner.property('stream-maintenance', maintenanceCases(suite.world), runs(50), seed),
    T,
  );
  it(
    'stream append --from FILE.jsonl: knobs, combinations, files that are not JSON Lines, attempt prefixes',
    () => suite.runner.property('stream-append-from', appendFromCases(), runs(30), seed),
    T,
  );
  it(
    'quality inspect / inspect-all / diagnose / observe / replay: ids, confirmation, manifests, selectors, forces',
    () => suite.runner.property('quality', qualityCases(suite.world), runs(120), seed),
    T,
  );
  it(
    'cost, faults list, local up, demo: knobs, flags, subcommands',
    () => suite.runner.property('other-commands', otherCommandCases(), runs(40), seed),
    T,
  );
  it(
    '--aws options: without --aws, malformed --stack / --region / --profile (no AWS call)',
    () => suite.runner.property('aws-options', awsOptionCases(suite.world), runs(60), seed),
    T,
  );
  it(
    '--state-machine-arn / --name without --aws, flow run --aws without --name',
    () => suite.runner.property('aws-only-flags', awsOnlyFlagCases, runs(10), seed),
    T,
  );
  it(
    'delivery with parts: part_rows, max_concurrency, rolling windows; run / recovery options',
    () => suite.runner.property('delivery-parts', partsCases(suite.world), runs(60), seed),
    T,
  );
  it(
    `flow run inputs: stream-compact, -materialize, -maintain, deliver-window, publish-clickhouse (#${LAKE}), delivery-reconcile / resume / retire, quality-observe, -replay, -diagnose`,
    () => suite.runner.property('flow-inputs-surface', flowSurfaceCases(suite.world), runs(120), seed),
    T,
  );

  it(
    'recovery dispatcher: a malformed status-change event is refused with a stable error and starts nothing',
    async () => {
      const { world } = suite;
      const before = await world.snapshot();
      const executions = new LocalFlowExecutions({ ports: world.runtime.ports, retryIntervalMs: 0 });
      const counted: string[] = [];
      const metrics = { count: (metric: string) => void counted.push(metric) };
      const notifier = recordingNotifier();
      const secrets = world.secrets(before);
      await fc.assert(
        fc.asyncProperty(dispatchCases, async (c) => {
          const error = await dispatchRecovery(c.event, { executions, metrics, notifier, faults: inertFaults }).then(
            (result) => ({ accepted: result }),
            (e: unknown) => e as { name?: string; code?: string; message?: string; stack?: string },
          );
          expect(error, c.what).toMatchObject({
            name: 'Cutpoint.ValidationError',
            code: expect.stringMatching(/^recovery\.(event_invalid|status_not_terminal)$/),
          });
          // The refusal as the Lambda's log would show it: one code line, no secret.
          const line = `${(error as { code: string }).code}: ${(error as { message: string }).message}`;
          expect(outputViolations({ code: 1, stdout: '', stderr: `${line}\n` }, secrets), c.what).toEqual([]);
          expect([...executions.executions.keys()], c.what).toEqual([]);
          expect(counted, c.what).toEqual([]);
          expect(notifier.notices, c.what).toEqual([]);
        }),
        { numRuns: runs(120), seed },
      );
      expect(mutations(before, await world.snapshot())).toEqual([]);
    },
    T,
  );

  it('control: the dispatcher does start a recovery for the same request without its defect (the property is not blind)', async () => {
    const { world } = suite;
    const executions = new LocalFlowExecutions({ ports: world.runtime.ports, retryIntervalMs: 0 });
    const valid = validRequest(`control-${seed}`);
    const result = await dispatchRecovery(valid, {
      executions,
      metrics: { count: () => undefined },
      notifier: recordingNotifier(),
      faults: inertFaults,
    });
    expect(result.recovery).toMatchObject({
      action: 'started',
      flow: 'commit-generation',
      name: `recover-commit-generation-control-${seed}`,
    });
    await executions.settled();
  }, 120_000);
});
